#include "client/rsv_request.h"

#include <cctype>
#include <charconv>

#include "client/rsv_args.h"
#include "client/text_fields.h"

namespace sluice::client {
namespace {

using nlohmann::json;

// -m or -n -R: where the reservation is.
Status AddPlace(const RsvFlags& f, json& body) {
  if (f.hosts && f.slots)
    return InvalidArgument("-m and -n: give hosts or a number of slots, not both");
  if (f.request && !f.slots) return InvalidArgument("-R " + *f.request + ": goes with -n SLOTS");
  if (f.hosts) {
    Result<std::vector<std::string>> hosts = ExpandHostList(*f.hosts, "-m");
    if (!hosts) return hosts.error();
    body["hosts"] = *hosts;
  }
  if (f.slots) {
    int64_t slots = 0;
    const std::string& text = *f.slots;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), slots);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || slots < 1) {
      return InvalidArgument("-n " + text + ": expected a positive number of slots");
    }
    body["slots"] = slots;
  }
  if (f.request) {
    if (f.request->empty()) return InvalidArgument("-R: expected a resource request");
    body["request"] = *f.request;
  }
  return Status::Ok();
}

// -b, -e, -d, --overrun.
Status AddTimes(const RsvFlags& f, int64_t now, json& body) {
  if (f.end && f.duration && !f.recur) {
    return InvalidArgument("-e and -d: give an end or a duration, not both");
  }
  if (f.begin) {
    Result<int64_t> begin = ParseRsvTime(*f.begin, "-b", now);
    if (!begin) return begin.error();
    body["begin"] = *begin;
  }
  if (f.end) {
    Result<int64_t> end = ParseRsvTime(*f.end, "-e", now);
    if (!end) return end.error();
    if (body.contains("begin") && *end <= body["begin"].get<int64_t>()) {
      return InvalidArgument("-e " + *f.end + ": expected an end after the begin (-b " + *f.begin +
                             ")");
    }
    body["end"] = *end;
  }
  if (f.duration) {
    Result<int64_t> duration = ParseRsvDuration(*f.duration, "-d");
    if (!duration) return duration.error();
    body["duration"] = *duration;
  }
  if (f.overrun) {
    Result<int64_t> overrun = ParseRsvDuration(*f.overrun, "--overrun");
    if (!overrun) return overrun.error();
    body["overrun"] = *overrun;
  }
  return Status::Ok();
}

// --recur and --tz.
Status AddRecurrence(const RsvFlags& f, json& body) {
  if (f.tz && !f.recur) return InvalidArgument("--tz " + *f.tz + ": goes with --recur");
  if (!f.recur) return Status::Ok();
  if (*f.recur == "none") {
    body["recur"] = nullptr;
    return Status::Ok();
  }
  size_t fields = 0;
  for (std::string_view part : SplitFields(*f.recur, ' ')) fields += part.empty() ? 0 : 1;
  if (fields != 5) {
    return InvalidArgument("--recur '" + *f.recur +
                           "': expected a cron line of 5 fields: MINUTE HOUR DAY MONTH WEEKDAY, "
                           "e.g. '0 8 * * mon-fri'");
  }
  if (!f.tz || f.tz->empty()) {
    return InvalidArgument("--recur: needs --tz ZONE, e.g. --tz Europe/Berlin");
  }
  body["recur"] = {{"cron", *f.recur}, {"tz", *f.tz}};
  return Status::Ok();
}

Status AddPeople(const RsvFlags& f, json& body) {
  if (f.users) {
    Result<std::vector<std::string>> users = SplitNameList(*f.users, "-u");
    if (!users) return users.error();
    body["users"] = *users;
  }
  if (f.groups) {
    Result<std::vector<std::string>> groups = SplitNameList(*f.groups, "-g");
    if (!groups) return groups.error();
    body["groups"] = *groups;
  }
  if (f.maint) body["maint"] = *f.maint;
  if (f.ignore_jobs) body["ignore_jobs"] = *f.ignore_jobs;
  return Status::Ok();
}

// What add and preview need besides what each option checks.
Status CheckComplete(const RsvFlags& f) {
  if (!f.hosts && !f.slots) return InvalidArgument("-m HOSTS or -n SLOTS: where to reserve");
  if (!f.begin) return InvalidArgument("-b BEGIN: when the reservation begins");
  if (f.recur && f.recur != "none") {
    if (!f.duration) return InvalidArgument("--recur: needs -d DURATION, each window's length");
  } else if (!f.end && !f.duration) {
    return InvalidArgument("-e END or -d DURATION: when the reservation ends");
  }
  return Status::Ok();
}

}  // namespace

Status CheckRsvName(const std::string& name, const std::string& what) {
  const bool ok = !name.empty() && name.size() <= 64 &&
                  std::isalnum(static_cast<unsigned char>(name[0])) != 0 &&
                  name.find_first_not_of(
                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789-_.") == std::string::npos;
  if (ok) return Status::Ok();
  return InvalidArgument(what + " '" + name +
                         "': expected a name of letters, digits, '-', '_' and '.' (at most 64)");
}

Result<json> BuildRsvBody(const RsvFlags& flags, RsvBody kind, int64_t now) {
  json body = json::object();
  if (kind == RsvBody::kAdd || (kind == RsvBody::kPreview && !flags.name.empty())) {
    SLUICE_RETURN_IF_ERROR(CheckRsvName(flags.name, "NAME"));
    body["name"] = flags.name;
  }
  if (kind != RsvBody::kModify) SLUICE_RETURN_IF_ERROR(CheckComplete(flags));
  SLUICE_RETURN_IF_ERROR(AddPlace(flags, body));
  SLUICE_RETURN_IF_ERROR(AddTimes(flags, now, body));
  SLUICE_RETURN_IF_ERROR(AddPeople(flags, body));
  SLUICE_RETURN_IF_ERROR(AddRecurrence(flags, body));
  if (kind == RsvBody::kModify && body.empty()) {
    return InvalidArgument(
        "nothing to change: give at least one option (-m, -n, -b, -e, -d, -u, "
        "-g, --maint, --ignore-jobs, --overrun, --recur)");
  }
  return body;
}

}  // namespace sluice::client
