#include "client/wait_exit.h"

namespace sluice::client {

bool IsEndState(const std::string& state) {
  return state == "DONE" || state == "EXIT" || state == "CANCELLED";
}

int WaitExitCode(const nlohmann::json& job) {
  const std::string state = job.value("state", "");
  if (state == "DONE") return 0;
  const auto code = job.find("exit_code");
  if (code != job.end() && code->is_number_integer()) {
    const int64_t value = code->get<int64_t>();
    if (value >= 1 && value <= 255) return static_cast<int>(value);
  }
  return 1;
}

}  // namespace sluice::client
