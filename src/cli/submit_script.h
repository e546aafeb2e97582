// What `sluice submit` submits (R-UX-1): a job script or a command.
//   sluice submit [flags] FILE [ARGS...]   FILE names an existing regular file and no `--`
//                                         was given: FILE's content is the script
//   sluice submit [flags] < FILE           no command and standard input is not a terminal:
//                                         standard input is the script
//   sluice submit [flags] [--] CMD...      anything else: a command, as before
// A script's `#SLUICE`/`#BSUB`/`#SBATCH` directives (client/directives.h) fill the flags the
// command line left unset; its job is named after FILE (`stdin`) unless a flag or directive
// names it, as sbatch does. The file is read once, here: later edits change nothing.
// Thread-safety: reads files and standard input; call from the CLI's thread.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/submit_request.h"

namespace sluice::cli {

struct Submission {
  client::SubmitFlags flags;          // ready for BuildSubmitBody
  std::vector<std::string> warnings;  // directives ignored, for stderr
};

// `dash_dash`: `--` came before the command. `in` is standard input, or null when it is a
// terminal (never read then). `caller_env` is the caller's environment: a script's
// `#SBATCH --export` or `#BSUB -env` sends the job the environment they make of it (as sbatch
// and bsub would) unless the command line's --export is given. Errors: kInvalidArgument (no command, a bad directive
// naming FILE:LINE, an unreadable file), kResourceExhausted (a script above
// wire::kMaxScriptBytes).
Result<Submission> ResolveSubmission(const client::SubmitFlags& flags, bool dash_dash,
                                     std::istream* in, int64_t now,
                                     const std::map<std::string, std::string>& caller_env = {});

// The process's environment (`environ`) as a map, without SLUICE_TOKEN (a credential never
// travels with a job).
std::map<std::string, std::string> CallerEnvironment();
// The process's umask (a job creates its files with its submitter's, issue 47).
int CallerUmask();

// Reads a job script (at most wire::kMaxScriptBytes + 1 bytes; `where` names it in
// messages). Errors: kInvalidArgument (unreadable, empty), kResourceExhausted (too large).
Result<std::string> ReadScript(std::istream& in, const std::string& where);

}  // namespace sluice::cli
