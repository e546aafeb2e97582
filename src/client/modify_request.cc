#include "client/modify_request.h"

#include <charconv>

#include "client/submit_request.h"

namespace sluice::client {
namespace {

using nlohmann::json;

std::optional<int64_t> Positive(std::string_view text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

// -n N or -n MIN,MAX into the body.
Status AddTasks(const std::string& text, json& body) {
  const size_t comma = text.find(',');
  const std::optional<int64_t> lo = Positive(std::string_view(text).substr(0, comma));
  const std::optional<int64_t> hi =
      comma == std::string::npos ? lo : Positive(std::string_view(text).substr(comma + 1));
  if (!lo || !hi || *hi < *lo) {
    return InvalidArgument("-n " + text + ": expected N or MIN,MAX with 1 <= MIN <= MAX");
  }
  if (*lo == *hi) {
    body["tasks"] = *lo;
  } else {
    body["min_tasks"] = *lo;
    body["max_tasks"] = *hi;
  }
  return Status::Ok();
}

}  // namespace

Result<json> BuildModifyBody(const ModifyFlags& flags, int64_t now) {
  json body = json::object();
  if (flags.queue) body["queue"] = *flags.queue;
  if (flags.tasks) SLUICE_RETURN_IF_ERROR(AddTasks(*flags.tasks, body));
  if (flags.resreq) body["resreq"] = *flags.resreq;
  if (flags.run_limit) {
    if (*flags.run_limit == "none") {
      body["run_limit"] = nullptr;
    } else {
      Result<int64_t> limit = ParseRunLimit(*flags.run_limit);
      if (!limit) return limit.error();
      body["run_limit"] = *limit;
    }
  }
  if (flags.begin) {
    if (*flags.begin == "none") {
      body["begin"] = nullptr;
    } else {
      Result<int64_t> begin = ParseBeginTime(*flags.begin, now);
      if (!begin) return begin.error();
      body["begin"] = *begin;
    }
  }
  if (flags.depend) body["depend"] = *flags.depend;
  if (flags.priority) body["priority"] = *flags.priority;
  if (flags.name) body["name"] = *flags.name;
  if (body.empty()) {
    return InvalidArgument(
        "nothing to change: give at least one of -q -n -R -W -b -w "
        "--priority -J");
  }
  return body;
}

}  // namespace sluice::client
