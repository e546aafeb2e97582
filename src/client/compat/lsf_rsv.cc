#include "client/compat/lsf_rsv.h"

#include <charconv>
#include <ctime>
#include <set>

#include "client/compat/options.h"
#include "client/compat/slurm_values.h"
#include "client/format.h"
#include "client/printable.h"
#include "client/text_fields.h"

namespace sluice::client::compat {
namespace {

using nlohmann::json;

enum Opt {
  kName,
  kSystem,
  kUsers,
  kGroup,
  kHosts,
  kSlots,
  kRequest,
  kBegin,
  kEnd,
  kWindow,
  kUnit,
  kIgnoredValue,
  kIgnoredFlag,
  kRefusedValue,
  kRefusedFlag
};

constexpr OptionSpec kOptions[] = {
    {"-N", "", true, kName},
    {"-s", "", false, kSystem},
    {"-u", "", true, kUsers},
    {"-g", "", true, kGroup},
    {"-m", "", true, kHosts},
    {"-n", "", true, kSlots},
    {"-R", "", true, kRequest},
    {"-b", "", true, kBegin},
    {"-e", "", true, kEnd},
    {"-t", "", true, kWindow},
    {"-unit", "", true, kUnit},
    {"-d", "", true, kIgnoredValue},
    {"-f", "", false, kIgnoredFlag},
    {"-o", "", false, kRefusedFlag},
    {"-p", "", false, kRefusedFlag},
    {"-nosusp", "", false, kRefusedFlag},
    {"-q", "", true, kRefusedValue},
    {"-E", "", true, kRefusedValue},
    {"-Ep", "", true, kRefusedValue},
    {"-Et", "", true, kRefusedValue},
    {"-Ept", "", true, kRefusedValue},
};

std::optional<int64_t> Int(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// -u "alice bob physics/": users, and groups by their trailing slash.
void AddPeople(const std::string& value, RsvFlags& f) {
  std::string users, groups;
  for (std::string_view word : SplitFields(value, ' ')) {
    if (word.empty()) continue;
    std::string& list = word.back() == '/' ? groups : users;
    if (word.back() == '/') word.remove_suffix(1);
    list += (list.empty() ? "" : ",") + std::string(word);
  }
  if (!users.empty()) f.users = f.users ? *f.users + "," + users : users;
  if (!groups.empty()) f.groups = f.groups ? *f.groups + "," + groups : groups;
}

Status Apply(const ParsedOption& o, int64_t now, const std::string& zone, BrsvaddRequest& r) {
  RsvFlags& f = r.flags;
  switch (o.id) {
    case kName:
      f.name = o.value;
      break;
    case kSystem:
      f.maint = true;
      break;
    case kUsers:
      AddPeople(o.value, f);
      break;
    case kGroup:
      AddPeople(o.value + "/", f);
      break;
    case kHosts:
      f.hosts = o.value;
      break;
    case kSlots:
      f.slots = o.value;
      break;
    case kRequest:
      f.request = o.value;
      break;
    case kBegin:
      f.begin = o.value;
      break;
    case kEnd:
      f.end = o.value;
      break;
    case kWindow: {
      Result<std::pair<std::string, int64_t>> cron = LsfWindowToCron(o.value);
      if (!cron) return cron.error();
      f.recur = cron->first;
      f.duration = std::to_string(cron->second) + "s";
      f.tz = zone;
      if (!f.begin) f.begin = std::to_string(now);
      break;
    }
    case kUnit:
      if (o.value == "slot") break;
      return Status(StatusCode::kFailedPrecondition,
                    "-unit " + o.value + ": not supported by Sluice (hosts are given by -m)");
    case kIgnoredValue:
    case kIgnoredFlag:
      r.warnings.push_back(o.written + " ignored");
      break;
    default:
      return Status(StatusCode::kFailedPrecondition,
                    o.written + ": not supported by Sluice (docs/reservations.md)");
  }
  return Status::Ok();
}

// Members read without throwing on a wrong type (a newer or broken server).
bool BoolMember(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

std::string StringMember(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "-";
}

// [WEEKDAY:]HOUR[:MINUTE] -> {weekday or -1, minute of the day}.
std::optional<std::pair<int, int>> WindowEnd(std::string_view text) {
  std::vector<int64_t> fields;
  for (std::string_view part : SplitFields(text, ':')) {
    const auto value = Int(part);
    if (!value || *value < 0) return std::nullopt;
    fields.push_back(*value);
  }
  int64_t day = -1, hour = 0, minute = 0;
  if (fields.size() == 1) hour = fields[0];
  if (fields.size() == 2) hour = fields[0], minute = fields[1];
  if (fields.size() == 3) day = fields[0], hour = fields[1], minute = fields[2];
  if (fields.empty() || fields.size() > 3 || day > 6 || hour > 23 || minute > 59) {
    return std::nullopt;
  }
  return std::pair<int, int>(static_cast<int>(day), static_cast<int>(hour * 60 + minute));
}

// LSF's time: month/day/hour/minute.
std::string LsfClock(int64_t t) {
  const std::time_t time = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&time, &tm);
  return std::to_string(tm.tm_mon + 1) + "/" + std::to_string(tm.tm_mday) + "/" +
         std::to_string(tm.tm_hour) + "/" + std::to_string(tm.tm_min);
}

}  // namespace

Result<std::pair<std::string, int64_t>> LsfWindowToCron(const std::string& window) {
  const auto bad = [&] {
    return InvalidArgument("-t " + window +
                           ": expected [WEEKDAY:]HOUR[:MINUTE]-[WEEKDAY:]HOUR[:MINUTE]");
  };
  const size_t dash = window.find('-');
  if (dash == std::string::npos) return bad();
  const auto start = WindowEnd(std::string_view(window).substr(0, dash));
  const auto end = WindowEnd(std::string_view(window).substr(dash + 1));
  if (!start || !end || (start->first < 0) != (end->first < 0)) return bad();
  // Minutes from the start to the end, within a day or (with weekdays) a week.
  const int period = start->first < 0 ? 1440 : 7 * 1440;
  const int from = std::max(start->first, 0) * 1440 + start->second;
  const int to = std::max(end->first, 0) * 1440 + end->second;
  const int minutes = ((to - from) % period + period) % period;
  if (minutes == 0) return bad();
  const std::string cron = std::to_string(start->second % 60) + " " +
                           std::to_string(start->second / 60) + " * * " +
                           (start->first < 0 ? "*" : std::to_string(start->first));
  return std::pair<std::string, int64_t>(cron, int64_t{minutes} * 60);
}

Result<BrsvaddRequest> ParseBrsvaddArgs(std::span<const std::string> args, int64_t now,
                                        const std::string& zone) {
  Result<ParsedArgs> parsed = ParseOptions(args, kOptions, OptionStyle::kLsf, false);
  if (!parsed) return parsed.error();
  if (!parsed->operands.empty()) {
    return InvalidArgument("unexpected argument '" + parsed->operands.front() + "'");
  }
  BrsvaddRequest r;
  for (const ParsedOption& option : parsed->options) {
    SLUICE_RETURN_IF_ERROR(Apply(option, now, zone, r));
  }
  if (r.flags.hosts && r.flags.slots) {
    r.warnings.push_back("-n " + *r.flags.slots +
                         " ignored: Sluice reserves the whole hosts of -m");
    r.flags.slots.reset();
  }
  return r;
}

std::string NextRsvName(const json& list, const std::string& prefix) {
  std::set<std::string> taken;
  const json& items = list.is_object() ? list.value("reservations", json::array()) : list;
  for (const json& rsv : items.is_array() ? items : json::array()) {
    if (rsv.is_object() && rsv.contains("name") && rsv["name"].is_string()) {
      taken.insert(rsv["name"].get<std::string>());
    }
  }
  for (int n = 0;; ++n) {
    std::string name = prefix + "_" + std::to_string(n);
    if (!taken.contains(name)) return name;
  }
}

std::string FormatBrsvs(const json& list, int64_t now) {
  const json& items = list.is_object() ? list.value("reservations", json::array()) : list;
  std::vector<std::vector<std::string>> rows;
  for (const json& rsv : items.is_array() ? items : json::array()) {
    if (!rsv.is_object()) continue;
    std::string users;
    for (const char* key : {"users", "groups"}) {
      for (const json& name : rsv.value(key, json::array())) {
        if (!name.is_string()) continue;
        users += (users.empty() ? "" : ",") + name.get<std::string>() +
                 (std::string_view(key) == "groups" ? "/" : "");
      }
    }
    std::vector<std::string> hosts;
    for (const json& host : rsv.value("hosts", json::array())) {
      if (host.is_string()) hosts.push_back(host.get<std::string>());
    }
    std::string window = "-";
    if (rsv.contains("recur") && rsv["recur"].is_object()) {
      window = PrintableField(StringMember(rsv["recur"], "cron"));
    } else {
      for (const json& w : rsv.value("windows", json::array())) {
        if (!w.is_array() || w.size() != 2 || !w[0].is_number_integer()) continue;
        if (w[1].is_number_integer() && w[1].get<int64_t>() <= now) continue;
        window = LsfClock(w[0].get<int64_t>()) + "-" +
                 (w[1].is_number_integer() ? LsfClock(w[1].get<int64_t>()) : "");
        break;
      }
    }
    const json slots = rsv.value("slots", json());
    rows.push_back({PrintableField(StringMember(rsv, "name")),
                    BoolMember(rsv, "maint") ? "sys" : "user",
                    users.empty() ? "-" : PrintableField(users),
                    slots.is_number_integer() ? slots.dump() : "-",
                    hosts.empty() ? "-" : CompressHostList(hosts), window});
  }
  if (rows.empty()) return "No reservation found\n";
  return FormatTable({"RSVID", "TYPE", "USER", "NCPUS", "RSV_HOSTS", "TIME_WINDOW"}, rows);
}

}  // namespace sluice::client::compat
