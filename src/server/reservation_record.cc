#include "server/reservation_record.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "config/reservation_recurrence.h"

namespace sluice::server {
namespace {

using nlohmann::json;

constexpr int64_t kMaxTime = int64_t{1} << 40;  // as a job's begin (server/job_spec.cc)

std::string Describe(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

Status Expected(std::string_view field, std::string_view what, const json& got) {
  return InvalidArgument("reservation." + std::string(field) + ": expected " + std::string(what) +
                         ", got " + Describe(got));
}

// A name of letters, digits, '-', '_' and '.', 1 to 64 characters, starting with a letter or
// a digit (it appears in URLs and job specs).
bool IsName(const std::string& text) {
  if (text.empty() || text.size() > 64 || !std::isalnum(static_cast<unsigned char>(text[0]))) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// A user, group or host name: printable, without spaces, 1 to 255 characters.
bool IsWord(const std::string& text) {
  if (text.empty() || text.size() > 255) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) > ' ' && c != 0x7f; });
}

template <typename T, typename U>
Status Assign(Result<T> result, U& out) {
  if (!result) return result.error();
  out = std::move(*result);
  return Status::Ok();
}

Result<int64_t> Integer(const json& v, std::string_view field, int64_t min, std::string_view what) {
  const bool fits = v.is_number_integer() && !(v.is_number_unsigned() &&
                                               v.get<uint64_t>() > static_cast<uint64_t>(kMaxTime));
  if (!fits || v.get<int64_t>() < min || v.get<int64_t>() > kMaxTime) {
    return Expected(field, what, v);
  }
  return v.get<int64_t>();
}

Result<std::vector<std::string>> Words(const json& v, std::string_view field, bool non_empty,
                                       std::string_view what) {
  if (!v.is_array() || (non_empty && v.empty())) return Expected(field, what, v);
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const json& item : v) {
    if (!item.is_string() || !IsWord(item.get<std::string>())) return Expected(field, what, v);
    if (!seen.insert(item.get<std::string>()).second) {
      return InvalidArgument("reservation." + std::string(field) + ": '" + item.get<std::string>() +
                             "' is named twice");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<bool> Flag(const json& v, std::string_view field) {
  if (!v.is_boolean()) return Expected(field, "true or false", v);
  return v.get<bool>();
}

Result<std::optional<ReservationRecurrence>> Recurrence(const json& v) {
  if (v.is_null()) return std::optional<ReservationRecurrence>();
  constexpr std::string_view kWhat = R"(an object {"cron": "M H DOM MON DOW", "tz": ZONE} or null)";
  if (!v.is_object() || !v.contains("cron") || !v["cron"].is_string()) {
    return Expected("recur", kWhat, v);
  }
  ReservationRecurrence recur{.cron = v["cron"].get<std::string>()};
  for (const auto& [key, value] : v.items()) {
    if (key == "cron") continue;
    if (key != "tz" || !(value.is_string() || value.is_null())) return Expected("recur", kWhat, v);
    if (value.is_string()) recur.tz = value.get<std::string>();
  }
  return std::optional<ReservationRecurrence>(std::move(recur));
}

constexpr std::string_view kTimeText = "a time (Unix seconds, an integer >= 0)";

// One field of the body into `r` (each value checked alone).
Status ReadField(const std::string& key, const json& value, ReservationBodyKind kind,
                 ReservationRecord& r) {
  if (key == "name") {
    if (kind == ReservationBodyKind::kModify) {
      return InvalidArgument("reservation.name: a reservation's name cannot be changed");
    }
    if (!value.is_string() || !IsName(value.get<std::string>())) {
      return Expected(key, "a name of letters, digits, '-', '_' and '.' (at most 64)", value);
    }
    r.name = value.get<std::string>();
    return Status::Ok();
  }
  if (key == "hosts")
    return Assign(Words(value, key, true, "a non-empty list of host names"), r.hosts);
  if (key == "slots") return Assign(Integer(value, key, 1, "a number of slots >= 1"), r.slots);
  if (key == "request") {
    if (!value.is_string()) return Expected(key, "a request such as \"select[mem>4G]\"", value);
    r.request = value.get<std::string>();
    return Status::Ok();
  }
  if (key == "begin") return Assign(Integer(value, key, 0, kTimeText), r.begin);
  if (key == "end") return Assign(Integer(value, key, 0, kTimeText), r.end);
  if (key == "duration") {
    return Assign(Integer(value, key, 1, "a duration in seconds >= 1"), r.duration);
  }
  if (key == "users") return Assign(Words(value, key, false, "a list of user names"), r.users);
  if (key == "groups") return Assign(Words(value, key, false, "a list of group names"), r.groups);
  if (key == "maint") return Assign(Flag(value, key), r.maint);
  if (key == "ignore_jobs") return Assign(Flag(value, key), r.ignore_jobs);
  if (key == "overrun") {
    return Assign(Integer(value, key, 0, "a duration in seconds >= 0"), r.overrun);
  }
  if (key == "recur") return Assign(Recurrence(value), r.recur);
  return InvalidArgument("reservation." + key +
                         ": unknown field (name, hosts, slots, request, begin, end, duration, "
                         "users, groups, maint, ignore_jobs, overrun, recur)");
}

// Hosts or slots: exactly one way to say which hosts; `request` only with slots.
Status SettleHosts(const std::set<std::string>& given, ReservationBodyKind kind,
                   ReservationRecord& r) {
  if (given.contains("hosts") && given.contains("slots")) {
    return InvalidArgument("reservation.slots: give hosts or slots, not both");
  }
  const bool by_slots = given.contains("slots") || (r.slots && !given.contains("hosts"));
  if (given.contains("request") && !by_slots) {
    return InvalidArgument("reservation.request: only with slots (the hosts' request)");
  }
  if (given.contains("hosts")) {
    r.slots.reset();
    r.request.reset();
  } else if (given.contains("slots") || (given.contains("request") && r.slots)) {
    r.hosts.clear();  // picked again (AdvanceReservations)
  } else if (kind != ReservationBodyKind::kModify) {
    return InvalidArgument(
        "reservation.hosts: expected hosts (a list of host names) or slots (a number), got "
        "neither");
  }
  return Status::Ok();
}

// The end and the duration: without recurrence one gives the other; with it, the duration is
// each occurrence's and the end (optional) ends the recurrence.
Status SettleTimes(const std::set<std::string>& given, ReservationBodyKind kind,
                   ReservationRecord& r) {
  if (kind != ReservationBodyKind::kModify && !given.contains("begin")) {
    return InvalidArgument("reservation.begin: missing (" + std::string(kTimeText) + ")");
  }
  const bool end = given.contains("end");
  const bool duration = given.contains("duration");
  if (r.recur) {
    if (r.duration <= 0) {
      return InvalidArgument("reservation.duration: missing (each occurrence's length, seconds)");
    }
  } else {
    if (end && duration) {
      return InvalidArgument("reservation.duration: give end or duration, not both");
    }
    if (kind != ReservationBodyKind::kModify && !end && !duration) {
      return InvalidArgument(
          "reservation.end: expected end (a time) or duration (seconds), got neither");
    }
    if (end) {
      if (*r.end <= r.begin) {
        return InvalidArgument("reservation.end: expected a time after begin " +
                               std::to_string(r.begin) + ", got " + std::to_string(*r.end));
      }
      r.duration = *r.end - r.begin;
    } else {
      if (r.duration <= 0) {
        return InvalidArgument("reservation.duration: missing (the window's length, seconds)");
      }
      r.end = r.begin + r.duration;
    }
  }
  if (r.end && *r.end <= r.begin) {
    return InvalidArgument("reservation.end: expected a time after begin " +
                           std::to_string(r.begin) + ", got " + std::to_string(*r.end));
  }
  return Status::Ok();
}

Status CheckRecurrenceRule(const ReservationRecord& r) {
  if (!r.recur) return Status::Ok();
  Status s = config::CheckRecurrence(
      config::Recurrence{.cron = r.recur->cron, .time_zone = r.recur->tz, .duration = r.duration});
  if (!s.ok()) return InvalidArgument("reservation.recur: " + s.message());
  return Status::Ok();
}

}  // namespace

Result<ReservationRecord> ParseReservation(const json& body, ReservationBodyKind kind,
                                           const ReservationRecord* base) {
  if (!body.is_object()) return Expected("", "a reservation object", body);
  ReservationRecord r = base != nullptr ? *base : ReservationRecord{};
  std::set<std::string> given;
  for (const auto& [key, value] : body.items()) {
    given.insert(key);
    SLUICE_RETURN_IF_ERROR(ReadField(key, value, kind, r));
  }
  if (kind == ReservationBodyKind::kCreate && !given.contains("name")) {
    return InvalidArgument("reservation.name: missing");
  }
  if (kind == ReservationBodyKind::kModify && given.empty()) {
    return InvalidArgument("reservation: nothing to change (give any field but name)");
  }
  SLUICE_RETURN_IF_ERROR(SettleHosts(given, kind, r));
  SLUICE_RETURN_IF_ERROR(SettleTimes(given, kind, r));
  SLUICE_RETURN_IF_ERROR(CheckRecurrenceRule(r));
  return r;
}

std::string ToStoredJson(const ReservationRecord& r) {
  json j = {{"name", r.name},       {"hosts", r.hosts},
            {"begin", r.begin},     {"duration", r.duration},
            {"users", r.users},     {"groups", r.groups},
            {"maint", r.maint},     {"ignore_jobs", r.ignore_jobs},
            {"overrun", r.overrun}, {"creator", r.creator},
            {"created", r.created}};
  if (r.slots) j["slots"] = *r.slots;
  if (r.request) j["request"] = *r.request;
  if (r.end) j["end"] = *r.end;
  if (r.recur) j["recur"] = {{"cron", r.recur->cron}, {"tz", r.recur->tz}};
  return j.dump();
}

Result<ReservationRecord> FromStoredJson(const std::string& name, const std::string& text) {
  json j = json::parse(text, nullptr, false);
  const auto bad = [&](const std::string& why) {
    return InvalidArgument("stored reservation " + name + ": " + why);
  };
  if (!j.is_object()) return bad("not a JSON object");
  ReservationRecord r;
  for (const char* key : {"name", "creator"}) {
    if (!j.contains(key) || !j[key].is_string()) return bad(std::string(key) + " is not a string");
  }
  r.name = j["name"];
  r.creator = j["creator"];
  for (const char* key : {"begin", "duration", "overrun", "created"}) {
    if (!j.contains(key) || !j[key].is_number_integer()) {
      return bad(std::string(key) + " is not an integer");
    }
  }
  r.begin = j["begin"];
  r.duration = j["duration"];
  r.overrun = j["overrun"];
  r.created = j["created"];
  for (auto [key, out] : {std::pair{"hosts", &r.hosts}, std::pair{"users", &r.users},
                          std::pair{"groups", &r.groups}}) {
    if (!j.contains(key) || !j[key].is_array()) return bad(std::string(key) + " is not a list");
    for (const json& item : j[key]) {
      if (!item.is_string()) return bad(std::string(key) + " holds a non-string");
      out->push_back(item);
    }
  }
  r.maint = j.value("maint", false);
  r.ignore_jobs = j.value("ignore_jobs", false);
  if (j.contains("slots") && j["slots"].is_number_integer()) r.slots = j["slots"].get<int64_t>();
  if (j.contains("request") && j["request"].is_string()) r.request = j["request"];
  if (j.contains("end") && j["end"].is_number_integer()) r.end = j["end"].get<int64_t>();
  if (j.contains("recur") && j["recur"].is_object()) {
    r.recur = ReservationRecurrence{.cron = j["recur"].value("cron", ""),
                                    .tz = j["recur"].value("tz", "")};
  }
  if (r.name != name || r.hosts.empty() || r.duration <= 0) return bad("inconsistent fields");
  return r;
}

Result<std::vector<WallSpan>> ExpandWindows(const ReservationRecord& r, Instant now) {
  std::vector<WallSpan> out;
  if (!r.recur) {
    if (r.begin + r.duration > now) out.push_back({r.begin, r.begin + r.duration});
    return out;
  }
  const Instant from = std::max(now, r.begin);
  Instant until = from + kRecurrenceHorizon;
  if (r.end) until = std::min(until, *r.end);
  if (until <= from) return out;
  // One more than kept: an occurrence begun before `begin` may be dropped below.
  Result<std::vector<config::WallWindow>> windows = config::ExpandRecurrence(
      config::Recurrence{.cron = r.recur->cron, .time_zone = r.recur->tz, .duration = r.duration},
      from, until, kMaxWindows + 1);
  if (!windows) return InvalidArgument("reservation.recur: " + windows.error().message());
  for (const config::WallWindow& w : *windows) {
    if (w.begin < r.begin || (r.end && w.begin >= *r.end)) continue;
    if (out.size() == kMaxWindows) break;
    out.push_back({w.begin, w.end});
  }
  return out;
}

json ReservationJson(const ReservationRecord& r, const std::vector<WallSpan>& windows,
                     Instant now) {
  json spans = json::array();
  bool open = false;
  for (const WallSpan& w : windows) {
    if (w.end <= now) continue;  // ended (the controller keeps it through its overrun)
    spans.push_back(json::array({w.begin, w.end}));
    open = open || w.begin <= now;
  }
  std::string state = open ? "active" : "waiting";
  if (spans.empty() && (!r.recur || (r.end && *r.end <= now))) state = "ended";
  return {{"name", r.name},
          {"hosts", r.hosts},
          {"slots", r.slots ? json(*r.slots) : json(nullptr)},
          {"request", r.request ? json(*r.request) : json(nullptr)},
          {"begin", r.begin},
          {"end", r.end ? json(*r.end) : json(nullptr)},
          {"duration", r.duration},
          {"users", r.users},
          {"groups", r.groups},
          {"maint", r.maint},
          {"ignore_jobs", r.ignore_jobs},
          {"overrun", r.overrun},
          {"recur", r.recur ? json{{"cron", r.recur->cron}, {"tz", r.recur->tz}} : json(nullptr)},
          {"creator", r.creator},
          {"created", r.created},
          {"windows", std::move(spans)},
          {"state", state}};
}

}  // namespace sluice::server
