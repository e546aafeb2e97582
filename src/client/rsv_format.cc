#include "client/rsv_format.h"

#include <ctime>
#include <vector>

#include "client/compat/slurm_values.h"
#include "client/format.h"
#include "client/printable.h"
#include "client/rsv_args.h"

namespace sluice::client {
namespace {

using nlohmann::json;
using Row = std::vector<std::string>;

std::string LocalText(int64_t t, const char* format) {
  const std::time_t time = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&time, &tm);
  char buffer[48];
  std::strftime(buffer, sizeof buffer, format, &tm);
  return buffer;
}

std::string Scalar(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "-";
  if (it->is_string())
    return it->get<std::string>().empty() ? "-" : PrintableField(it->get<std::string>());
  if (it->is_boolean()) return it->get<bool>() ? "yes" : "no";
  return it->dump();
}

std::vector<std::string> Strings(const json& object, const char* key) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const json& item : *it) {
    if (item.is_string()) out.push_back(PrintableField(item.get<std::string>()));
  }
  return out;
}

std::string Joined(const std::vector<std::string>& items, const std::string& sep,
                   const std::string& suffix = "") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : sep) + item + suffix;
  return out;
}

int64_t Int(const json& object, const char* key, int64_t fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

// The hosts compressed, or `8 slots [span[hosts=1]]`.
std::string WhereText(const json& rsv) {
  const std::vector<std::string> hosts = Strings(rsv, "hosts");
  if (!hosts.empty()) return compat::CompressHostList(hosts);
  if (!rsv.contains("slots") || !rsv["slots"].is_number_integer()) return "-";
  std::string out = rsv["slots"].dump() + " slots";
  if (rsv.contains("request") && rsv["request"].is_string())
    out += " [" + Scalar(rsv, "request") + "]";
  return out;
}

// The windows not ended by `now`, as [begin, end] pairs (end may be null).
std::vector<std::pair<int64_t, json>> OpenWindows(const json& rsv, int64_t now) {
  std::vector<std::pair<int64_t, json>> out;
  if (auto it = rsv.find("windows"); it != rsv.end() && it->is_array()) {
    for (const json& w : *it) {
      if (!w.is_array() || w.size() != 2 || !w[0].is_number_integer()) continue;
      if (w[1].is_number_integer() && w[1].get<int64_t>() <= now) continue;
      out.emplace_back(w[0].get<int64_t>(), w[1]);
    }
    return out;
  }
  if (rsv.contains("begin") && rsv["begin"].is_number_integer()) {
    out.emplace_back(rsv["begin"].get<int64_t>(), rsv.value("end", json()));
  }
  return out;
}

std::string UsersText(const json& rsv) {
  std::string out = Joined(Strings(rsv, "users"), ",");
  const std::string groups = Joined(Strings(rsv, "groups"), ",", "/");
  if (!groups.empty()) out += (out.empty() ? "" : ",") + groups;
  return out.empty() ? "-" : out;
}

std::string FlagsText(const json& rsv) {
  std::vector<std::string> flags;
  for (const char* flag : {"maint", "ignore_jobs"}) {
    if (auto it = rsv.find(flag); it != rsv.end() && it->is_boolean() && it->get<bool>()) {
      flags.push_back(flag);
    }
  }
  if (rsv.contains("recur") && rsv["recur"].is_object()) flags.push_back("recur");
  if (const int64_t overrun = Int(rsv, "overrun", 0); overrun > 0) {
    flags.push_back("overrun=" + DurationText(overrun));
  }
  return flags.empty() ? "-" : Joined(flags, ",");
}

void Line(std::string_view label, const std::string& value, std::string& out) {
  constexpr size_t kWidth = 16;
  out += "  " + std::string(label) + ":";
  out += std::string(label.size() + 1 < kWidth ? kWidth - label.size() - 1 : 1, ' ');
  out += value + "\n";
}

std::string TimeOrDash(const json& value) {
  return value.is_number_integer() ? LocalText(value.get<int64_t>(), "%Y-%m-%d %H:%M:%S %Z") : "-";
}

}  // namespace

std::string WindowText(int64_t begin, const json& end) {
  std::string out = LocalText(begin, "%Y-%m-%d %H:%M") + " - ";
  if (!end.is_number_integer()) return out + "open";
  const int64_t e = end.get<int64_t>();
  const bool same_day = LocalText(begin, "%Y-%m-%d") == LocalText(e, "%Y-%m-%d");
  return out + LocalText(e, same_day ? "%H:%M" : "%Y-%m-%d %H:%M");
}

std::string FormatReservations(const json& list, int64_t now) {
  const json& items = list.is_object() ? list.value("reservations", json::array()) : list;
  std::vector<Row> rows;
  for (const json& rsv : items.is_array() ? items : json::array()) {
    if (!rsv.is_object()) continue;
    const auto windows = OpenWindows(rsv, now);
    std::string window = windows.empty() ? "-" : WindowText(windows[0].first, windows[0].second);
    if (windows.size() > 1) window += " (+" + std::to_string(windows.size() - 1) + ")";
    rows.push_back({Scalar(rsv, "name"), Scalar(rsv, "state"), WhereText(rsv), window,
                    UsersText(rsv), FlagsText(rsv)});
  }
  if (rows.empty()) return "No reservations\n";
  return FormatTable({"NAME", "STATE", "WHERE", "WINDOW", "USERS", "FLAGS"}, rows);
}

std::string FormatReservationLong(const json& rsv, int64_t now, size_t max_windows) {
  if (!rsv.is_object()) return "-\n";
  std::string out = "Reservation " + Scalar(rsv, "name") + "\n";
  Line("State", Scalar(rsv, "state"), out);
  if (!Strings(rsv, "hosts").empty()) {
    Line("Hosts", WhereText(rsv) + " (" + std::to_string(Strings(rsv, "hosts").size()) + ")", out);
  } else {
    Line("Slots", Scalar(rsv, "slots"), out);
    Line("Request", Scalar(rsv, "request"), out);
  }
  Line("Begin", TimeOrDash(rsv.value("begin", json())), out);
  Line("End", TimeOrDash(rsv.value("end", json())), out);
  const int64_t duration = Int(rsv, "duration", 0);
  Line("Duration", duration > 0 ? DurationText(duration) : "-", out);
  if (auto recur = rsv.find("recur"); recur != rsv.end() && recur->is_object()) {
    Line("Recurrence", Scalar(*recur, "cron") + " (" + Scalar(*recur, "tz") + ")", out);
  }
  const std::string users = Joined(Strings(rsv, "users"), ", ");
  const std::string groups = Joined(Strings(rsv, "groups"), ", ");
  Line("Users", users.empty() ? "-" : users, out);
  Line("Groups", groups.empty() ? "-" : groups, out);
  Line("Maintenance", Scalar(rsv, "maint"), out);
  Line("Ignore jobs", Scalar(rsv, "ignore_jobs"), out);
  const int64_t overrun = Int(rsv, "overrun", 0);
  Line("Overrun", overrun > 0 ? DurationText(overrun) : "-", out);
  Line("Created", TimeOrDash(rsv.value("created", json())) + " by " + Scalar(rsv, "creator"), out);
  const auto windows = OpenWindows(rsv, now);
  out += windows.empty() ? "  No window ahead\n" : "  Next windows:\n";
  for (size_t i = 0; i < windows.size() && i < max_windows; ++i) {
    out += "    " + WindowText(windows[i].first, windows[i].second) + "\n";
  }
  if (windows.size() > max_windows) {
    out += "    ... " + std::to_string(windows.size() - max_windows) + " more\n";
  }
  return out;
}

std::string FormatRsvPreview(const json& body) {
  const json preview = body.is_object() ? body : json::object();
  std::string out;
  std::vector<Row> running;
  for (const json& job : preview.value("running", json::array())) {
    if (!job.is_object()) continue;
    const std::vector<std::string> hosts = Strings(job, "hosts");
    running.push_back({Scalar(job, "id"), Scalar(job, "user"),
                       hosts.empty() ? "-" : compat::CompressHostList(hosts),
                       TimeOrDash(job.value("end", json()))});
  }
  if (running.empty()) {
    out += "No running job would run into the reservation.\n";
  } else {
    out += "Running jobs that would run into the reservation (" + std::to_string(running.size()) +
           "):\n" + FormatTable({"JOBID", "USER", "HOSTS", "ENDS_BY"}, running);
  }
  std::vector<Row> delayed;
  for (const json& job : preview.value("delayed", json::array())) {
    if (!job.is_object()) continue;
    delayed.push_back({Scalar(job, "id"), Scalar(job, "user"),
                       TimeOrDash(job.value("estimated_start", json())),
                       TimeOrDash(job.value("estimated_start_with", json()))});
  }
  if (delayed.empty()) return out + "No pending job would be delayed.\n";
  return out + "Pending jobs it would delay (" + std::to_string(delayed.size()) + "):\n" +
         FormatTable({"JOBID", "USER", "START_WITHOUT", "START_WITH"}, delayed);
}

std::string HostReservationsText(const json& host) {
  std::string out;
  auto it = host.find("reservations");
  if (it == host.end() || !it->is_array()) return out;
  for (const json& rsv : *it) {
    if (!rsv.is_object() || !rsv.contains("begin") || !rsv["begin"].is_number_integer()) continue;
    out += (out.empty() ? "" : "; ") + Scalar(rsv, "name") + " " +
           WindowText(rsv["begin"].get<int64_t>(), rsv.value("end", json()));
  }
  return out;
}

}  // namespace sluice::client
