// The `sluice` front-end (R-ARCH-3; issue 21, the one-process-per-job submit path).
//
// `sluice` is what users run for every verb. The client verbs over plain HTTP (submit, jobs,
// cancel, hold, release, hosts, queues, limits, queue, host, modify, requeue, history, peek,
// rsv) run in this process, which links only libc, libm and libmunge: no cpp-httplib, OpenSSL,
// SQLite, yaml-cpp, spdlog or prometheus, so a loop of `sluice submit` pays ~1 ms of process
// start instead of ~4. Everything else — the server, the agent, the simulator, `--help`
// without a verb, and any command line or SLUICE_SERVER naming an https:// URL — is handed to
// the complete binary `sluice-full` next to it by execv (same PID, same argv), which runs
// cli::Main. The output and exit codes are the same either way.
// Thread-safety: main-thread only.
#pragma once

#include <string_view>

namespace sluice::cli {

// True for the verbs the front-end runs itself.
bool IsFrontEndVerb(std::string_view verb);

// True when the front-end may run argv itself: argv[1] is a front-end verb and neither argv nor
// `env_server` (SLUICE_SERVER, may be null) mentions https:// (the front-end has no TLS).
bool RunsInFrontEnd(int argc, const char* const* argv, const char* env_server);

// Runs argv: here (the client verbs) or by execv of sluice-full. Returns the exit code.
int FrontEndMain(int argc, char** argv);

}  // namespace sluice::cli
