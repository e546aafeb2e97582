#include "client/compat/slurm_rsv.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <vector>

#include "client/compat/slurm_values.h"
#include "client/printable.h"
#include "client/rsv_args.h"
#include "client/submit_request.h"
#include "client/text_fields.h"

namespace sluice::client::compat {
namespace {

using nlohmann::json;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Status Unsupported(const std::string& what) {
  return Status(StatusCode::kFailedPrecondition, what + " is not supported by Sluice");
}

// StartTime/EndTime -> epoch seconds as text (which ParseRsvTime reads back as they are).
Result<std::string> SlurmTime(const std::string& key, const std::string& value, int64_t now) {
  Result<int64_t> at = ParseRsvTime(value, key, now);  // now, and ISO times
  if (Lower(value).starts_with("now+")) {              // Slurm's unit is seconds, Sluice's minutes
    Result<std::string> relative = TranslateSlurmBegin(Lower(value), now);
    at = relative ? ParseBeginTime(*relative, now) : Result<int64_t>(relative.error());
  }
  if (!at) {
    return InvalidArgument(key + "=" + value +
                           ": expected now, now+N[minutes|hours|days] or YYYY-MM-DDTHH:MM[:SS]");
  }
  return std::to_string(*at);
}

// Flags=MAINT,IGNORE_JOBS,DAILY...; the recurrence's name goes to `recur` (made a cron line
// once StartTime is known).
Status ApplyFlags(const std::string& value, RsvFlags& f, std::string& recur) {
  for (std::string_view item : SplitFields(value, ',')) {
    const bool off = item.starts_with("-");
    const std::string flag = Lower(off ? item.substr(1) : item);
    if (flag == "maint") {
      f.maint = !off;
    } else if (flag == "ignore_jobs") {
      f.ignore_jobs = !off;
    } else if (!off && (flag == "daily" || flag == "weekday" || flag == "weekend" ||
                        flag == "weekly" || flag == "hourly")) {
      recur = flag;
    } else if (!flag.empty()) {
      return Unsupported("Flags=" + std::string(item));
    }
  }
  return Status::Ok();
}

Status ApplyKey(const std::string& key, const std::string& value, int64_t now, RsvFlags& f,
                std::string& recur) {
  if (key == "reservationname" || key == "reservation") {
    f.name = value;
  } else if (key == "starttime" || key == "endtime") {
    Result<std::string> at = SlurmTime(key == "starttime" ? "StartTime" : "EndTime", value, now);
    if (!at) return at.error();
    (key == "starttime" ? f.begin : f.end) = *at;
  } else if (key == "duration") {
    Result<int64_t> seconds = ParseSlurmTime(value);
    if (!seconds || *seconds <= 0) {
      return InvalidArgument("Duration=" + value + ": expected MINUTES or [DAYS-]HH:MM:SS");
    }
    f.duration = std::to_string(*seconds) + "s";
  } else if (key == "nodes") {
    if (Lower(value) == "all") return Unsupported("Nodes=ALL");
    f.hosts = value;
  } else if (key == "corecnt") {
    f.slots = value;
  } else if (key == "users" || key == "groups") {
    if (value.find('-') == 0 || value.find(",-") != std::string::npos) {
      return Unsupported(std::string(key == "users" ? "Users" : "Groups") + "=-NAME (exclusion)");
    }
    (key == "users" ? f.users : f.groups) = value;
  } else if (key == "flags") {
    return ApplyFlags(value, f, recur);
  } else if (key == "nodecnt" || key == "partitionname" || key == "partition" ||
             key == "accounts" || key == "licenses" || key == "tres" || key == "features" ||
             key == "burstbuffer" || key == "watts" || key == "maxstartdelay") {
    return Unsupported(key + "=");
  } else {
    return InvalidArgument("invalid keyword: " + key + "=" + value);
  }
  return Status::Ok();
}

// DAILY, WEEKLY... as a cron line at `begin`'s local minute, hour and weekday.
std::string CronAt(const std::string& recur, int64_t begin) {
  const std::time_t t = static_cast<std::time_t>(begin);
  std::tm tm{};
  localtime_r(&t, &tm);
  const std::string minute = std::to_string(tm.tm_min);
  const std::string at = minute + " " + std::to_string(tm.tm_hour) + " * * ";
  if (recur == "hourly") return minute + " * * * *";
  if (recur == "weekday") return at + "mon-fri";
  if (recur == "weekend") return at + "sat,sun";
  if (recur == "weekly") return at + std::to_string(tm.tm_wday);
  return at + "*";
}

// An epoch time SlurmTime wrote.
int64_t Epoch(const std::string& text) {
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// With a recurrence, Slurm's EndTime ends the first window: Sluice's duration.
Status ApplyRecurrence(const std::string& recur, const std::string& zone, RsvFlags& f) {
  if (recur.empty()) return Status::Ok();
  if (!f.begin) return InvalidArgument("Flags=" + recur + ": needs StartTime");
  const int64_t begin = Epoch(*f.begin);
  if (f.end && !f.duration) {
    const int64_t length = Epoch(*f.end) - begin;
    if (length <= 0) return InvalidArgument("EndTime: expected a time after StartTime");
    f.duration = std::to_string(length) + "s";
  }
  f.end.reset();
  f.recur = CronAt(recur, begin);
  f.tz = zone;
  return Status::Ok();
}

std::string Strings(const json& rsv, const char* key) {
  std::string out;
  auto it = rsv.find(key);
  if (it == rsv.end() || !it->is_array()) return "(null)";
  for (const json& item : *it) {
    if (item.is_string()) out += (out.empty() ? "" : ",") + PrintableField(item.get<std::string>());
  }
  return out.empty() ? "(null)" : out;
}

bool Flag(const json& rsv, const char* key) {
  auto it = rsv.find(key);
  return it != rsv.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

Result<RsvFlags> ParseScontrolReservation(std::span<const std::string> words, int64_t now,
                                          const std::string& zone) {
  RsvFlags f;
  std::string recur;
  for (const std::string& word : words) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("expected KEY=VALUE, got '" + word + "'");
    }
    SLUICE_RETURN_IF_ERROR(ApplyKey(Lower(word.substr(0, eq)), word.substr(eq + 1), now, f, recur));
  }
  SLUICE_RETURN_IF_ERROR(ApplyRecurrence(recur, zone, f));
  return f;
}

std::string ScontrolShowReservation(const json& rsv, int64_t now) {
  if (!rsv.is_object()) return "";
  int64_t begin = 0, end = 0;
  for (const json& w :
       rsv.contains("windows") && rsv["windows"].is_array() ? rsv["windows"] : json::array()) {
    if (!w.is_array() || w.size() != 2 || !w[0].is_number_integer()) continue;
    const int64_t e = w[1].is_number_integer() ? w[1].get<int64_t>() : 0;
    if (e != 0 && e <= now) continue;
    begin = w[0].get<int64_t>();
    end = e;
    break;
  }
  std::vector<std::string> hosts;
  if (auto it = rsv.find("hosts"); it != rsv.end() && it->is_array()) {
    for (const json& h : *it) {
      if (h.is_string()) hosts.push_back(h.get<std::string>());
    }
  }
  std::string flags;
  if (Flag(rsv, "maint")) flags += "MAINT,";
  if (Flag(rsv, "ignore_jobs")) flags += "IGNORE_JOBS,";
  if (!hosts.empty()) flags += "SPEC_NODES,";
  if (!flags.empty()) flags.pop_back();
  const json slots = rsv.value("slots", json());
  const std::string name = rsv.contains("name") && rsv["name"].is_string()
                               ? PrintableField(rsv["name"].get<std::string>())
                               : "(null)";
  const std::string state =
      rsv.contains("state") && rsv["state"] == "active" ? "ACTIVE" : "INACTIVE";
  return "ReservationName=" + name + " StartTime=" + SlurmDateTime(begin) +
         " EndTime=" + SlurmDateTime(end) +
         " Duration=" + (end > begin ? SlurmClock(end - begin) : "UNLIMITED") + "\n" +
         "   Nodes=" + (hosts.empty() ? "(null)" : CompressHostList(hosts)) +
         " NodeCnt=" + std::to_string(hosts.size()) +
         " CoreCnt=" + (slots.is_number_integer() ? slots.dump() : "0") +
         " Features=(null) PartitionName=(null) Flags=" + (flags.empty() ? "(null)" : flags) +
         "\n   TRES=(null)\n   Users=" + Strings(rsv, "users") +
         " Groups=" + Strings(rsv, "groups") + " Accounts=(null) Licenses=(null) State=" + state +
         " BurstBuffer=(null) Watts=n/a\n" + "   MaxStartDelay=(null)\n\n";
}

}  // namespace sluice::client::compat
