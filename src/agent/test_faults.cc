#include "agent/test_faults.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <string_view>

namespace sluice::agent {

FaultPlan FaultPlan::FromEnvironment() {
  FaultPlan plan;
  const char* value = std::getenv("SLUICE_AGENT_FAULT");
  if (value == nullptr || *value == '\0') return plan;
  constexpr std::string_view kExitJournaled = "crash-after-exit-journaled";
  const std::string_view text(value);
  if (text == kExitJournaled) {
    plan.crash_after_exit_journaled = 1;
  } else if (text.starts_with(std::string(kExitJournaled) + ":")) {
    char* end = nullptr;
    const std::string number(text.substr(kExitJournaled.size() + 1));
    const double p = std::strtod(number.c_str(), &end);
    if (end != number.c_str() && *end == '\0' && p >= 0 && p <= 1) {
      plan.crash_after_exit_journaled = p;
    } else {
      spdlog::warn("SLUICE_AGENT_FAULT={}: expected a probability in [0, 1]; ignored", value);
    }
  } else {
    spdlog::warn("SLUICE_AGENT_FAULT={}: unknown fault; ignored", value);
  }
  if (plan.crash_after_exit_journaled > 0) {
    spdlog::warn(
        "fault injection on: the agent SIGKILLs itself after journaling an exit "
        "(probability {})",
        plan.crash_after_exit_journaled);
  }
  return plan;
}

bool FaultFires(double probability) {
  if (probability <= 0) return false;
  thread_local std::mt19937_64 random{std::random_device{}()};
  return probability >= 1 || std::uniform_real_distribution<double>(0, 1)(random) < probability;
}

void CrashNow(const std::string& where) {
  spdlog::warn("fault injection: SIGKILL {}", where);
  spdlog::default_logger()->flush();
  kill(getpid(), SIGKILL);
}

}  // namespace sluice::agent
