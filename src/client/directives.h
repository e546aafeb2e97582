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
// Options (each also as `--long=VALUE` or `--long VALUE` where it has a long form):
//   #SLUICE  the flags of `sluice submit`: -q -n -R -W -w -b -x -H -o -e -J -P --priority
//            --cwd --array (and their long names)
//   #BSUB    -n -q -W -J -o/-oo -e/-eo -R -x -w -b -P -H; `-J name[1-50]%5` is an array
//   #SBATCH  --ntasks/-n --partition/-p --time/-t --job-name/-J --output/-o --error/-e
//            --exclusive --dependency/-d --begin --array/-a --account/-A (the project) and
//            --hold/-H; Slurm's time forms (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S) become
//            seconds and its dependencies (afterok:1:2,afterany:3 or ?-separated) become the
//            dependency expression (`done(1) && done(2) && ended(3)`)
// A few #SBATCH options that mean nothing to Sluice (mail, --nodes=1 ...) are listed in
// `warnings` and otherwise ignored; any other option, a missing or malformed value is an
// error naming the line: `job.sh:4: #SBATCH --time=abc: expected M, M:S, H:M:S, D-H, ...`.
//
// Precedence (MergeFlags): a flag given on the command line wins over a directive; among
// directives the last one wins, as in sbatch and bsub.
// Thread-safety: pure functions, no I/O (fuzzed: tests/fuzz/directives_fuzz.cc).
// Implements R-UX-1 (directives).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "client/submit_request.h"

namespace sluice::client {

struct Directives {
  SubmitFlags flags;                  // what the directives set; `command` stays empty
  std::vector<std::string> warnings;  // "job.sh:3: #SBATCH --mail-user ignored"
};

// `where` names the script in messages ("job.sh", "stdin"). `now` (epoch seconds) checks
// begin times. Errors: kInvalidArgument "WHERE:LINE: DIRECTIVE: what was expected".
Result<Directives> ParseDirectives(std::string_view script, std::string_view where, int64_t now);

// The flags of `sluice submit` in one string (`-n 4 -q short -o "my out"`), split into words
// as a shell would and read as a `#SLUICE` line's: DRMAA's native specification (issue 46,
// drmaa/native_spec.h). Messages start with `where` ("drmaa_native_specification:") and name
// the option. Errors: kInvalidArgument, e.g. "WHERE -n x: expected N or MIN,MAX ...".
Result<SubmitFlags> ParseSubmitFlags(std::string_view text, std::string_view where, int64_t now);

// The flags the job is submitted with: `command_line` where it set a flag, else `directives`.
SubmitFlags MergeFlags(const SubmitFlags& command_line, const SubmitFlags& directives);

// Slurm's --time forms -> seconds. Errors: kInvalidArgument naming the value.
Result<int64_t> ParseSlurmTime(std::string_view text);
// Slurm's --dependency -> Sluice's expression. Errors: kInvalidArgument naming the value.
Result<std::string> TranslateSlurmDependency(std::string_view text);

}  // namespace sluice::client
