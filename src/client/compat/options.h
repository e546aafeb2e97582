// The command lines of Slurm's and LSF's commands, read as their originals read them
// (R-COMPAT-1): a table of options per command and one parser for each dialect's habits.
//
//   kGetopt (Slurm, getopt_long): `-n4` and `-n 4`, `--ntasks=4` and `--ntasks 4`, flags
//     clustered (`-hP`), a long name by any unique prefix (`--part`), `--` ends the options.
//     Operands may come between options (squeue, scancel) unless `stop_at_operand` (sbatch:
//     the script's own arguments follow it).
//   kLsf (LSF): every option is one word (`-n`, `-cwd`, `-oo`, `-Is`), its value the next
//     word; the first operand ends the options when `stop_at_operand` (bsub: the command
//     follows), else operands may come anywhere (bjobs, bkill).
//
// Errors are kInvalidArgument with getopt's words, without the program's name:
// `unrecognized option '--bogus'`, `invalid option -- 'Z'`, `option '--time' requires an
// argument`, `option requires an argument -- 't'`, `option '--m' is ambiguous`; the command
// prints them after its own name.
// Thread-safety: pure functions.
// Implements the option reading of R-COMPAT-1.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::client::compat {

enum class OptionStyle { kGetopt, kLsf };

struct OptionSpec {
  std::string_view short_name;  // "-n" (kGetopt: one letter after the dash); "" for none
  std::string_view long_name;   // "--ntasks" (kGetopt only); "" for none
  bool takes_value = false;
  int id = 0;  // what the command calls the option (its own enum)
  // kGetopt long options only: the value may follow `=` but is never the next word
  // (`--exclusive[=user]`).
  bool optional_value = false;
};

struct ParsedOption {
  int id = 0;
  std::string written;  // as given, for messages: "--time=abc", "-t"
  std::string value;    // "" for a flag
  bool has_value = false;
};

struct ParsedArgs {
  std::vector<ParsedOption> options;  // in the order given
  std::vector<std::string> operands;  // everything else, in order
};

// Reads `args` (without the program name).
Result<ParsedArgs> ParseOptions(std::span<const std::string> args,
                                std::span<const OptionSpec> specs, OptionStyle style,
                                bool stop_at_operand);

}  // namespace sluice::client::compat
