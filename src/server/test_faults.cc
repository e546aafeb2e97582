#include "server/test_faults.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace sluice::server {

FaultPlan FaultPlan::FromEnvironment() {
  FaultPlan plan;
  const char* value = std::getenv("SLUICE_SERVER_FAULT");
  if (value == nullptr || *value == '\0') return plan;
  constexpr std::string_view kHang = "hang-scheduling-once:";
  const std::string_view text(value);
  if (text.starts_with(kHang) && text.size() > kHang.size()) {
    plan.hang_scheduling_once = std::string(text.substr(kHang.size()));
    spdlog::warn("fault injection on: the scheduling thread hangs once {} exists",
                 plan.hang_scheduling_once);
  } else {
    spdlog::warn("SLUICE_SERVER_FAULT={}: unknown fault; ignored", value);
  }
  return plan;
}

bool FaultPlan::SchedulingHangs() const {
  return !hang_scheduling_once.empty() && access(hang_scheduling_once.c_str(), F_OK) == 0;
}

}  // namespace sluice::server
