#include "agent/report_budget.h"

#include <nlohmann/json.hpp>

#include "base/utf8.h"

namespace sluice::agent {
namespace {

size_t JsonSize(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size() + 1;
}

}  // namespace

std::string BoundedText(std::string_view text, size_t max_bytes) {
  // Room for the note, so the result stays within max_bytes.
  const size_t keep =
      text.size() <= max_bytes ? max_bytes : (max_bytes > 32 ? max_bytes - 32 : max_bytes);
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = Utf8SequenceLength(text, i);
    const size_t width = n == 0 ? 1 : n;
    if (out.size() + width > keep) break;
    if (n == 0) {
      out += '?';
    } else {
      out.append(text.substr(i, n));
    }
    i += width;
  }
  if (i < text.size() && max_bytes > 32) {
    out += " ...(" + std::to_string(text.size() - i) + " bytes cut)";
  }
  return out;
}

size_t FillReports(const std::map<int64_t, wire::ExitReport>& exits,
                   const std::map<int64_t, wire::LaunchFailure>& failures, size_t budget,
                   wire::HeartbeatRequest& request) {
  size_t used = 0;
  size_t left = 0;
  for (const auto& [job, exit] : exits) {
    // {"job":..,"cause":"..","exit_code":..,"signal":..}
    const size_t size = 96;
    if (used + size > budget) {
      ++left;
      continue;
    }
    used += size;
    request.exited.push_back(exit);
  }
  for (const auto& [job, failure] : failures) {
    wire::LaunchFailure bounded{.job = failure.job,
                                .message = BoundedText(failure.message),
                                .host_fault = failure.host_fault};
    const size_t size = JsonSize({{"job", bounded.job}, {"message", bounded.message}});
    if (used + size > budget) {
      ++left;
      continue;
    }
    used += size;
    request.launch_failed.push_back(std::move(bounded));
  }
  return left;
}

}  // namespace sluice::agent
