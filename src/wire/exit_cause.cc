#include "wire/exit_cause.h"

namespace sluice::wire {

std::string_view ToString(ExitCause cause) {
  switch (cause) {
    case ExitCause::kExit:
      return "exit";
    case ExitCause::kRunLimit:
      return "run_limit";
    case ExitCause::kKilled:
      return "killed";
    case ExitCause::kMemLimit:
      return "mem_limit";
    case ExitCause::kFenced:
      return "fenced";
  }
  return "exit";
}

}  // namespace sluice::wire
