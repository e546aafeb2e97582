#include "sim/jsonl_reservation.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace sluice::sim {
namespace {

using Json = nlohmann::json;

Status Expected(std::string_view field, std::string_view what) {
  return InvalidArgument(fmt::format("reservation.{}: expected {}", field, what));
}

Status ReadTime(const Json& value, std::string_view field, Instant& out) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0) {
    return Expected(field, "an integer >= 0");
  }
  out = value.get<int64_t>();
  return Status::Ok();
}

Status ReadNames(const Json& value, std::string_view field, std::vector<std::string>& out) {
  if (!value.is_array()) return Expected(field, "an array of strings");
  for (const Json& item : value) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      return Expected(field, "an array of non-empty strings");
    }
    out.push_back(item.get<std::string>());
  }
  return Status::Ok();
}

Status ReadWindows(const Json& value, std::vector<core::ReservationWindow>& out) {
  if (!value.is_array() || value.empty()) return Expected("windows", "a non-empty array");
  for (const Json& pair : value) {
    if (!pair.is_array() || pair.size() != 2) return Expected("windows", "[begin, end] pairs");
    core::ReservationWindow w;
    SLUICE_RETURN_IF_ERROR(ReadTime(pair[0], "windows", w.begin));
    SLUICE_RETURN_IF_ERROR(ReadTime(pair[1], "windows", w.end));
    out.push_back(w);
  }
  return Status::Ok();
}

}  // namespace

Result<core::AdvanceReservationSpec> ParseReservationLine(const Json& object) {
  if (!object.is_object()) return Expected("", "an object");
  core::AdvanceReservationSpec spec;
  std::optional<Instant> begin;
  std::optional<Instant> end;
  for (const auto& [key, value] : object.items()) {  // sorted keys: deterministic errors
    if (key == "name") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        return Expected("name", "a non-empty string");
      }
      spec.name = value.get<std::string>();
    } else if (key == "hosts") {
      SLUICE_RETURN_IF_ERROR(ReadNames(value, "hosts", spec.hosts));
    } else if (key == "users") {
      SLUICE_RETURN_IF_ERROR(ReadNames(value, "users", spec.users));
    } else if (key == "groups") {
      SLUICE_RETURN_IF_ERROR(ReadNames(value, "groups", spec.groups));
    } else if (key == "begin" || key == "end") {
      Instant t = 0;
      SLUICE_RETURN_IF_ERROR(ReadTime(value, key, t));
      (key == "begin" ? begin : end) = t;
    } else if (key == "windows") {
      SLUICE_RETURN_IF_ERROR(ReadWindows(value, spec.windows));
    } else if (key == "maint") {
      if (!value.is_boolean()) return Expected("maint", "a boolean");
      spec.maint = value.get<bool>();
    } else if (key == "overrun") {
      SLUICE_RETURN_IF_ERROR(ReadTime(value, "overrun", spec.overrun));
    } else {
      return InvalidArgument(fmt::format("reservation.{}: unknown key", key));
    }
  }
  if (spec.name.empty()) return Expected("name", "a name (required)");
  if (spec.hosts.empty()) return Expected("hosts", "at least one host");
  if (!spec.windows.empty() && (begin || end)) {
    return Expected("windows", "either windows or begin and end, not both");
  }
  if (spec.windows.empty()) {
    if (!begin || !end) return Expected("begin", "begin and end (or windows)");
    if (*end <= *begin) return Expected("end", fmt::format("an end after begin {}", *begin));
    spec.windows.push_back({*begin, *end});
  }
  return spec;
}

}  // namespace sluice::sim
