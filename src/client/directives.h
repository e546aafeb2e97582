// Job script directives (R-UX-1): the `#SLUICE`, `#BSUB` and `#SBATCH` lines at the top of a
// script submitted with `sluice submit [flags] FILE [ARGS]`, read into the same SubmitFlags the
// command line fills, so that an LSF or Slurm user's script runs unchanged.
//
// Where directives are read: from the first line (a `#!` line is skipped) down to the first
// line that is neither blank nor a comment (`#...`), as sbatch does; `#SBATCH` lines after a
// command are ordinary comments. A directive starts at the beginning of its line. Its rest is
// split into words as a shell would (single and double quotes, backslash escapes); a word
// starting with `#` begins a trailing comment.
//
// Options:
//   #SLUICE  the flags of `sluice submit`: -q -n -R --gpu -W -w -b -x -H -o -e -J -P --priority
//            --cwd --array -U (each also as `--long=VALUE` or `--long VALUE`)
//   #BSUB    bsub's options, read by bsub's own table (client/compat/bsub_request.h)
//   #SBATCH  sbatch's options, read by sbatch's own table (client/compat/sbatch_request.h):
//            Slurm's time forms, dependencies, --export, --mem, --cpus-per-task, --nodes ...
// Options that mean nothing to Sluice (mail, --requeue ...) are listed in `warnings` and
// otherwise ignored; any other option, a missing or malformed value is an error naming the
// line: `job.sh:4: #SBATCH --time=abc: Invalid --time specification`.
//
// Precedence (MergeFlags): a flag given on the command line wins over a directive; among
// directives of one dialect the last one wins, as in sbatch and bsub; a script mixing
// dialects takes #SLUICE over #BSUB over #SBATCH.
// Thread-safety: pure functions, no I/O (fuzzed: tests/fuzz/directives_fuzz.cc).
// Implements R-UX-1 (directives).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "client/compat/bsub_request.h"
#include "client/compat/sbatch_request.h"
#include "client/submit_request.h"

namespace sluice::client {

enum class DirectiveDialect { kSluice, kBsub, kSbatch };

// One directive line: its dialect, its words (split as a shell would) and where it is
// ("job.sh:4: ", for messages).
struct DirectiveLine {
  DirectiveDialect dialect = DirectiveDialect::kSluice;
  std::vector<std::string> words;
  std::string where;
  std::string text;  // the line as written (for messages)
};

// The directive lines at the top of `script`. Errors: kInvalidArgument "WHERE:LINE: ...: what
// was expected" (an unterminated quote).
Result<std::vector<DirectiveLine>> ReadDirectiveLines(std::string_view script,
                                                      std::string_view where);

// The #SBATCH (#BSUB) lines of `lines` into one request; ignored options become warnings.
// Errors name the line.
Status ReadSbatchLines(const std::vector<DirectiveLine>& lines, int64_t now,
                       compat::SbatchRequest& request, std::vector<std::string>& warnings);
Status ReadBsubLines(const std::vector<DirectiveLine>& lines, int64_t now,
                     compat::BsubRequest& request, std::vector<std::string>& warnings);

struct Directives {
  SubmitFlags flags;                  // what the directives set; `command` stays empty
  std::vector<std::string> warnings;  // "job.sh:3: #SBATCH --mail-user ignored ..."
  std::optional<std::string> slurm_export;  // #SBATCH --export, as written
  std::optional<std::string> lsf_env;       // #BSUB -env, as written
};

// `where` names the script in messages ("job.sh", "stdin"). `now` (epoch seconds) checks
// begin times. Errors: kInvalidArgument "WHERE:LINE: DIRECTIVE: what was expected"
// (kFailedPrecondition for an option Sluice does not support).
Result<Directives> ParseDirectives(std::string_view script, std::string_view where, int64_t now);

// The flags of `sluice submit` in one string (`-n 4 -q short -o "my out"`), split into words
// as a shell would and read as a `#SLUICE` line's: DRMAA's native specification (issue 46,
// drmaa/native_spec.h). Messages start with `where` ("drmaa_native_specification:") and name
// the option. Errors: kInvalidArgument, e.g. "WHERE -n x: expected N or MIN,MAX ...".
Result<SubmitFlags> ParseSubmitFlags(std::string_view text, std::string_view where, int64_t now);

// The flags the job is submitted with: `command_line` where it set a flag, else `directives`.
SubmitFlags MergeFlags(const SubmitFlags& command_line, const SubmitFlags& directives);

}  // namespace sluice::client
