#include "sim/workload_writer.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string_view>

#include "wire/job_json.h"

namespace sluice::sim {
namespace {

// Writes `"key": value` pairs separated by ", ".
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  void Int(std::string_view key, int64_t value) {
    Key(key);
    fmt::format_to(std::back_inserter(out_), "{}", value);
  }
  void String(std::string_view key, std::string_view value) {
    Key(key);
    wire::AppendJsonString(value, out_);
  }
  void True(std::string_view key) {
    Key(key);
    out_ += "true";
  }
  void Close() { out_ += "}\n"; }

 private:
  void Key(std::string_view key) {
    if (!first_) out_ += ", ";
    first_ = false;
    out_ += '"';
    out_ += key;
    out_ += "\": ";
  }
  std::string& out_;
  bool first_ = true;
};

void AppendJsonlJob(std::string& out, const WorkloadJob& job) {
  const core::JobSpec& spec = job.spec;
  ObjectWriter object(out);
  object.Int("id", spec.id);
  object.Int("submit", spec.submit_time);
  if (!spec.user.empty()) object.String("user", spec.user);
  if (!spec.project.empty()) object.String("project", spec.project);
  if (!spec.queue.empty()) object.String("queue", spec.queue);
  if (spec.min_tasks == spec.max_tasks) {
    object.Int("tasks", spec.min_tasks);
  } else {
    object.Int("min_tasks", spec.min_tasks);
    object.Int("max_tasks", spec.max_tasks);
  }
  if (!spec.resreq.empty()) object.String("resreq", spec.resreq);
  object.Int("runtime", job.runtime);
  if (spec.run_limit.has_value()) object.Int("run_limit", *spec.run_limit);
  if (spec.priority != 0) object.Int("priority", spec.priority);
  if (spec.begin_time != 0) object.Int("begin", spec.begin_time);
  if (!spec.depend.empty()) object.String("depend", spec.depend);
  if (spec.exclusive) object.True("exclusive");
  if (spec.hold) object.True("hold");
  if (!job.array.empty()) object.String("array", job.array);
  if (job.cancel_at.has_value()) object.Int("cancel_at", *job.cancel_at);
  if (!spec.name.empty()) object.String("name", spec.name);
  if (!spec.command.empty()) object.String("command", spec.command);
  object.Close();
}

// N when `user` is exactly "u" followed by the decimal form of N >= 0.
std::optional<int64_t> CanonicalUserNumber(std::string_view user) {
  if (user.size() < 2 || user[0] != 'u') return std::nullopt;
  int64_t number = 0;
  const char* first = user.data() + 1;
  const char* last = user.data() + user.size();
  auto [end, ec] = std::from_chars(first, last, number);
  if (ec != std::errc() || end != last || number < 0) return std::nullopt;
  if (fmt::format("u{}", number) != user) return std::nullopt;  // "u007", "u-0"
  return number;
}

// SWF user numbers: `u<N>` keeps N; other names are numbered after the largest N, in order
// of first appearance.
std::map<std::string, int64_t, std::less<>> NumberUsers(const Workload& workload) {
  std::map<std::string, int64_t, std::less<>> numbers;
  int64_t next = 0;
  for (const WorkloadJob& job : workload.jobs) {
    std::optional<int64_t> n = CanonicalUserNumber(job.spec.user);
    if (n.has_value() && *n >= next) next = *n + 1;
  }
  for (const WorkloadJob& job : workload.jobs) {
    const std::string& user = job.spec.user;
    if (user.empty() || numbers.contains(user)) continue;
    std::optional<int64_t> n = CanonicalUserNumber(user);
    numbers.emplace(user, n.has_value() ? *n : next++);
  }
  return numbers;
}

}  // namespace

std::string WriteJsonl(const Workload& workload) {
  std::string out;
  out.reserve(workload.jobs.size() * 96);
  for (const WorkloadJob& job : workload.jobs) AppendJsonlJob(out, job);
  return out;
}

std::string WriteSwf(const Workload& workload) {
  std::string out;
  out.reserve(workload.jobs.size() * 80 + 256);
  auto it = std::back_inserter(out);
  const size_t count = workload.jobs.size();
  fmt::format_to(it, "; Version: 2.2\n; Computer: sluice gen\n");
  fmt::format_to(it, "; MaxJobs: {}\n; MaxRecords: {}\n", count, count);
  if (workload.unix_start_time != 0) {
    fmt::format_to(it, "; UnixStartTime: {}\n", workload.unix_start_time);
  }
  fmt::format_to(it, "; MaxNodes: {}\n; MaxProcs: {}\n", workload.procs, workload.procs);
  const auto users = NumberUsers(workload);
  for (const WorkloadJob& job : workload.jobs) {
    const core::JobSpec& spec = job.spec;
    const auto user = users.find(spec.user);
    const int64_t user_number = user == users.end() ? -1 : user->second;
    const int64_t run_limit = spec.run_limit.has_value() ? *spec.run_limit : -1;
    // Fields: 1 id, 2 submit, 3 wait, 4 runtime, 5 procs, 6 cpu, 7 memory, 8 requested procs,
    // 9 requested time, 10 requested memory, 11 status, 12 user, 13 group, 14 executable,
    // 15 queue, 16 partition, 17 preceding job, 18 think time.
    fmt::format_to(it, "{} {} -1 {} {} -1 -1 {} {} -1 1 {} -1 -1 -1 -1 -1 -1\n", spec.id,
                   spec.submit_time, job.runtime, spec.max_tasks, spec.max_tasks, run_limit,
                   user_number);
  }
  return out;
}

}  // namespace sluice::sim
