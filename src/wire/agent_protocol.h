// The agent protocol (docs/api.md, "Agents") as messages: the register and heartbeat requests an
// agent sends, the replies the controller sends back, each with its JSON encoder and decoder.
// Both sides use these, so a field is named and checked in one place.
//
// Representation: plain value structs; a host is a `core::HostSpec` (its `state` is not sent).
// Decoding never throws. Requests (what the controller receives from the network) are strict:
// unknown fields, wrong types and out-of-range numbers are kInvalidArgument naming the field,
// e.g. `running: expected job ids, got "7"`. Replies (what the agent reads) are lenient about
// extra fields (a newer controller may add some) and strict about the types of the fields used,
// e.g. `launch[2].job: expected an integer`.
// Encoding then decoding gives the message back (except what the notes on fields say).
// Implements the message shapes of R-SRV-2 and R-SRV-3. Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/model/config.h"
#include "wire/exit_cause.h"
#include "wire/gpu_indexes.h"
#include "wire/gpu_report.h"
#include "wire/health_report.h"
#include "wire/peek.h"
#include "wire/step_stream.h"

namespace sluice::wire {

// POST /v1/agents/register. `host.slots` is sent only when positive; absent, it decodes as 1.
// `host.gpus` and `host.gpus_auto` are not sent: detected devices travel in `gpus`.
struct RegisterRequest {
  core::HostSpec host;
  std::set<int64_t> running;  // the jobs the agent still runs (reconciliation, R-SRV-2)
  uint64_t epoch = 0;         // the highest controller epoch the agent has seen
  // Which agent process speaks (random per agent, at most 64 characters; empty for old
  // agents): the controller refuses a second instance for a host held within its lease.
  std::string instance;
  // nullopt: the agent did not look (an older agent, virtual hosts); the controller then
  // leaves the host's GPUs as configured. A controller older than the field refuses it (400
  // "gpus: unknown field"); the agent then registers without it.
  std::optional<GpuReport> gpus;
  // The host's last health check result (R-OPS-4, wire/health_report.h); nullopt: none run
  // yet. A controller older than the field refuses it; the agent then registers without it.
  std::optional<HealthReport> health;
};

struct RegisterReply {
  uint64_t epoch = 0;
  int lease_seconds = 10;
  // How long the agent keeps its jobs without a controller's answer before it kills them
  // (ControllerOptions::agent_absence_ms). Absent on the wire (an older controller): the lease.
  int absence_seconds = 0;
  int heartbeat_ms = 500;  // the agent's long-poll wait; decoded clamped to [10, 10000]
  // The host's health check (R-OPS-4); nullopt (null or absent): none.
  std::optional<core::HealthCheck> health_check;
};

struct ExitReport {
  int64_t job = 0;
  // The run that ended: its launch's `run`, journaled with the exit. 0: not known (an older
  // agent, an end found in a shepherd's record), and then taken as the job's current run.
  uint64_t run = 0;
  std::optional<int> exit_code;  // the exit status as a shell shows it (128 + signal if killed)
  std::optional<int> signal;     // set when the job's leader was killed by a signal
  ExitCause cause = ExitCause::kExit;
  // Accounting (R-SEC-4): user + system CPU and memory peak of the job; absent from an agent
  // that did not measure them. Decoded only when finite and >= 0.
  std::optional<double> cpu_seconds;
  std::optional<double> max_rss_mb;
  std::string message;  // e.g. for kMemLimit the limit and the peak; "" none

  // The status the controller records: 128 + signal when killed, else the exit code, else 0.
  int32_t ShellStatus() const;
};

struct LaunchFailure {
  int64_t job = 0;
  std::string message;
  // The host caused it (its cgroups, fork, a launch that hung), not the job (its files, its
  // program, its account): the controller requeues the job without counting the attempt and
  // closes the host after several in a row (issue 47.3). Absent on the wire: false.
  bool host_fault = false;
};

// The host's load (issue 47.9, agent/host_load.h): run-queue averages over 1, 5 and 15
// minutes and the memory available for new work in MB (-1: unknown). Shown, not scheduled on.
struct HostLoad {
  double r1m = 0;
  double r5m = 0;
  double r15m = 0;
  int64_t mem_available_mb = -1;
  bool operator==(const HostLoad&) const = default;
};

// Heartbeat body (POST /v1/agents/NAME/heartbeat). `wait_ms` decodes clamped to
// [0, kMaxWaitMs].
inline constexpr int64_t kMaxWaitMs = 10'000;
struct HeartbeatRequest {
  uint64_t epoch = 0;
  int64_t wait_ms = 0;
  std::set<int64_t> running;
  std::vector<ExitReport> exited;
  std::vector<LaunchFailure> launch_failed;
  std::string instance;                // as registered (RegisterRequest::instance)
  std::vector<PeekResult> peeks;       // answers to `peek` orders (wire/peek.h)
  std::optional<HostLoad> load;        // "load": {"r1m", "r5m", "r15m", "mem_available_mb"}
  std::optional<HealthReport> health;  // as RegisterRequest::health
  // "restarting": true — the agent's last heartbeat before it stops for a restart, leaving its
  // batch jobs to its next run (issue 43). Absent: false.
  bool restarting = false;
};

// One job to start. Exactly one of `argv` and `command` is needed by the agent; the controller
// sends both (argv wins). `run_limit` travels as seconds.
struct Launch {
  int64_t job = 0;
  // Which run of the job this is (numbered by the controller at each dispatch; a requeued job
  // runs again under a new number), echoed in the exit report so that a late report of an
  // earlier run is not taken for this one's. 0: not said (an older controller).
  uint64_t run = 0;
  std::vector<std::string> argv;
  std::string command;
  std::string cwd;  // empty: the agent's work directory
  std::string output;
  std::string error;
  std::optional<std::chrono::milliseconds> run_limit;
  std::map<std::string, std::string> env;
  std::string user;
  // Containment (R-SEC-1, R-SEC-3): the UNIX account the job runs as (empty from an older
  // controller: the agent then refuses the launch), its memory limit on this host (rusage mem
  // x its tasks here) and its CPUs (its slots here). Decoded: limits positive or absent.
  std::string account;
  std::optional<int64_t> mem_limit_mb;
  std::optional<int> cpu_limit;
  // A job script's text (R-UX-1): the agent runs a private copy of it with its `#!`
  // interpreter (default /bin/sh) and argv[1...] as its arguments. Empty: no script.
  std::string script;
  // The submitter's umask for the files the job creates (output and error first); nullopt:
  // 077 (issue 48). Decoded in [0, 0777].
  std::optional<int> umask;
  // `output` is the server's default (sluice-%j.out): discarded, not a failed launch, when it
  // cannot be created (issue 47).
  bool output_default = false;
  // An interactive job (R-LAUNCH-3, `sluice run`): its stdin, stdout and stderr are step 0's
  // streams through the controller (wire/step_stream.h), on a terminal with `pty`, instead of
  // /dev/null and the output files. Absent: a batch job.
  struct Attach {
    bool pty = false;
    int rows = 0;
    int cols = 0;
  };
  std::optional<Attach> attach;
  // Its GPUs on this host (R-GPU-3), and every GPU's device node so that the agent fences
  // the others off; empty on a host without GPUs.
  GpuBinding gpus;
};

struct KillOrder {
  int64_t job = 0;
  int grace_seconds = 10;  // decoded clamped to [0, 3600]
};

// A running job's run limit changed (an administrator's `sluice modify -W`, R-UX-7): the
// agent's kill timer follows, counted from when it started the job; nullopt: no limit.
struct RunLimitOrder {
  int64_t job = 0;
  std::optional<int64_t> run_limit_seconds;  // decoded >= 1
};

// A user's signal to a running job (`sluice cancel --signal`, issue 47): the agent sends it to
// what the job runs on this host, which goes on running unless the signal ends it.
struct SignalOrder {
  int64_t job = 0;
  uint64_t run = 0;    // the run it is for (the launch's); 0: whichever runs
  std::string signal;  // a name of wire/signal_name.h ("USR1"), checked when decoded
};

struct HeartbeatReply {
  uint64_t epoch = 0;
  std::vector<Launch> launch;
  std::vector<KillOrder> kill;
  std::vector<RunLimitOrder> run_limits;  // "run_limits": [{"job", "run_limit": s|null}]
  std::vector<int64_t> ack;               // exits and launch failures the controller has committed
  std::vector<PeekOrder> peek;            // output tails users asked for (wire/peek.h)
  std::vector<StepOrder> steps;           // launches into running jobs (wire/step_stream.h)
  std::vector<StepKill> step_kill;
  std::vector<SignalOrder> signals;  // "signal": [{"job", "run", "signal"}]
  // The host's health check as the configuration says now (a reconfiguration reaches live
  // agents): absent, unchanged; null, none.
  std::optional<std::optional<core::HealthCheck>> health_check;
};

// Agent -> controller.
nlohmann::json EncodeRegister(const RegisterRequest& request);
// Errors: the body is not an object, has an unknown field, a name that is not a host name
// (letters, digits, -._; 1 to 255 characters), or a field of the wrong type or range.
Result<RegisterRequest> DecodeRegister(const nlohmann::json& body);

nlohmann::json EncodeHeartbeat(const HeartbeatRequest& request);
// Errors: as DecodeRegister; each exit and launch failure needs an integer `job`.
Result<HeartbeatRequest> DecodeHeartbeat(const nlohmann::json& body);

// Controller -> agent.
nlohmann::json EncodeRegisterReply(const RegisterReply& reply);
Result<RegisterReply> DecodeRegisterReply(const nlohmann::json& body);

nlohmann::json EncodeLaunch(const Launch& launch);
nlohmann::json EncodeHeartbeatReply(const HeartbeatReply& reply);
nlohmann::json EncodeRunLimitOrder(const RunLimitOrder& order);
nlohmann::json EncodeSignalOrder(const SignalOrder& order);
// Errors: a launch without a positive job id or without argv and command, or a field used with
// the wrong type.
Result<HeartbeatReply> DecodeHeartbeatReply(const nlohmann::json& body);

}  // namespace sluice::wire
