#include "client/compat/compat_job.h"

#include "core/reasons/reason.h"
#include "wire/reasons_json.h"

namespace sluice::client::compat {
namespace {

using nlohmann::json;

std::string TextOf(const json& job, const char* key) {
  auto it = job.find(key);
  return it != job.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t TimeOf(const json& job, const char* key) {
  auto it = job.find(key);
  return it != job.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

template <typename T>
std::optional<T> NumberOf(const json& job, const char* key) {
  auto it = job.find(key);
  if (it == job.end() || !it->is_number()) return std::nullopt;
  return it->get<T>();
}

// `command`: a string is a shell command; an array is an argv, or a script's name and
// arguments (a script job).
void ReadCommand(const json& job, CompatJob& out) {
  auto it = job.find("command");
  if (it == job.end()) return;
  if (it->is_string()) {
    out.command = it->get<std::string>();
    return;
  }
  if (!it->is_array()) return;
  for (const json& word : *it) {
    if (!word.is_string()) continue;
    if (!out.command.empty()) out.command += ' ';
    out.command += word.get<std::string>();
  }
  out.script = true;
}

}  // namespace

std::string CompatJob::SlurmId() const {
  return index ? std::to_string(id) + "_" + std::to_string(*index) : std::to_string(id);
}

std::string CompatJob::LsfId() const { return std::to_string(id); }

std::string CompatJob::Expand(std::string_view pattern) const {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char c = pattern[++i];
    if (c == 'j' || c == 'J' || c == 'A') {
      out += std::to_string(id);
    } else if (c == 'a' || c == 'I') {
      out += index ? std::to_string(*index) : "0";
    } else if (c == 'x') {
      out += name;
    } else if (c == 'u') {
      out += user;
    } else if (c == '%') {
      out += '%';
    } else {
      out += '%';
      out += c;
    }
  }
  return out;
}

int32_t CompatJob::Slots() const {
  int32_t slots = 0;
  for (const auto& [host, n] : hosts) slots += n;
  return slots > 0 ? slots : tasks;
}

CompatJob JobFromObject(const json& job) {
  CompatJob out;
  if (!job.is_object()) return out;
  out.id = NumberOf<int64_t>(job, "id").value_or(0);
  out.index = NumberOf<int64_t>(job, "index");
  out.array = TextOf(job, "array");
  out.name = TextOf(job, "name");
  out.user = TextOf(job, "user");
  out.account = TextOf(job, "account");
  out.queue = TextOf(job, "queue");
  out.state = TextOf(job, "state");
  out.cause = TextOf(job, "cause");
  out.reason = TextOf(job, "reason");
  out.project = TextOf(job, "project");
  out.depend = TextOf(job, "depend");
  out.resreq = TextOf(job, "resreq");
  out.cwd = TextOf(job, "cwd");
  out.output = TextOf(job, "output");
  out.error = TextOf(job, "error");
  out.message = TextOf(job, "message");
  ReadCommand(job, out);
  out.submit_time = TimeOf(job, "submit_time");
  out.start_time = TimeOf(job, "start_time");
  out.end_time = TimeOf(job, "end_time");
  out.begin = TimeOf(job, "begin");
  out.run_limit = NumberOf<int64_t>(job, "run_limit");
  out.exit_code = NumberOf<int32_t>(job, "exit_code");
  out.tasks = NumberOf<int32_t>(job, "tasks").value_or(1);
  out.priority = NumberOf<int64_t>(job, "priority").value_or(0);
  out.exclusive = job.value("exclusive", false);
  out.cpu_seconds = NumberOf<double>(job, "cpu_seconds");
  out.max_rss_mb = NumberOf<double>(job, "max_rss_mb");
  if (auto hosts = job.find("hosts"); hosts != job.end() && hosts->is_array()) {
    for (const json& host : *hosts) {
      if (!host.is_object()) continue;
      out.hosts.emplace_back(TextOf(host, "name"), NumberOf<int32_t>(host, "slots").value_or(1));
    }
  }
  if (!out.reason.empty()) {
    if (auto code = wire::ReasonCodeFromString(out.reason)) {
      out.reason_text = std::string(core::Headline(*code));
    }
  }
  return out;
}

CompatJob JobFromHistory(const wire::HistoryEntry& row) {
  CompatJob out{.id = row.id,
                .name = row.name,
                .user = row.user,
                .account = row.user,
                .queue = row.queue,
                .state = row.state,
                .cause = row.cause,
                .submit_time = row.submit_time,
                .start_time = row.start_time,
                .end_time = row.end_time,
                .exit_code = row.exit_code,
                .tasks = row.slots > 0 ? row.slots : 1,
                .hosts = row.hosts,
                .cpu_seconds = row.cpu_seconds,
                .message = row.message,
                .from_history = true};
  if (row.max_rss_mb) out.max_rss_mb = static_cast<double>(*row.max_rss_mb);
  return out;
}

// ---- Slurm ----

std::string_view ToString(SlurmState state) {
  switch (state) {
    case SlurmState::kPending:
      return "PENDING";
    case SlurmState::kRunning:
      return "RUNNING";
    case SlurmState::kCompleted:
      return "COMPLETED";
    case SlurmState::kFailed:
      return "FAILED";
    case SlurmState::kCancelled:
      return "CANCELLED";
    case SlurmState::kTimeout:
      return "TIMEOUT";
    case SlurmState::kOutOfMemory:
      return "OUT_OF_MEMORY";
    case SlurmState::kNodeFail:
      return "NODE_FAIL";
  }
  return "UNKNOWN";
}

std::string_view ShortCode(SlurmState state) {
  switch (state) {
    case SlurmState::kPending:
      return "PD";
    case SlurmState::kRunning:
      return "R";
    case SlurmState::kCompleted:
      return "CD";
    case SlurmState::kFailed:
      return "F";
    case SlurmState::kCancelled:
      return "CA";
    case SlurmState::kTimeout:
      return "TO";
    case SlurmState::kOutOfMemory:
      return "OOM";
    case SlurmState::kNodeFail:
      return "NF";
  }
  return "?";
}

SlurmState SlurmStateOf(const CompatJob& job) {
  if (job.state == "RUNNING" || job.state == "ADMITTING") return SlurmState::kRunning;
  if (job.state == "DONE") return SlurmState::kCompleted;
  if (job.state == "CANCELLED") return SlurmState::kCancelled;
  if (job.state == "EXIT") {
    if (job.cause == "RUN_LIMIT") return SlurmState::kTimeout;
    if (job.cause == "MEM_LIMIT") return SlurmState::kOutOfMemory;
    if (job.cause == "HOST_LOST") return SlurmState::kNodeFail;
    return SlurmState::kFailed;
  }
  return SlurmState::kPending;  // PENDING, HELD
}

namespace {

// A waiting job's reason in Slurm's words.
std::string_view SlurmWaitReason(std::string_view code) {
  struct Word {
    std::string_view sluice;
    std::string_view slurm;
  };
  static constexpr Word kWords[] = {
      {"HELD", "JobHeldUser"},
      {"BEGIN_TIME", "BeginTime"},
      {"QUEUE_INACTIVE", "PartitionInactive"},
      {"QUEUE_WINDOW", "PartitionDown"},
      {"PRIORITY_WAIT", "Priority"},
      {"RESERVED", "Priority"},
      {"GATED", "Priority"},
      {"FAIRSHARE", "Priority"},
      {"NO_RESOURCE", "Resources"},
      {"EXCLUSIVE", "Resources"},
      {"PREEMPTING", "Resources"},
      {"NO_MATCH", "ReqNodeNotAvail"},
      {"HOST_CLOSED", "ReqNodeNotAvail"},
      {"HOST_UNAVAIL", "NodeDown"},
      {"SHARED_RESOURCE", "Licenses"},
      {"DEPENDENCY", "Dependency"},
      {"QUEUE_RUN_LIMIT", "QOSResourceLimit"},
      {"QUEUE_CAPACITY", "QOSResourceLimit"},
      {"USER_LIMIT", "QOSResourceLimit"},
      {"LIMIT", "QOSResourceLimit"},
      {"HOST_LIMIT", "QOSResourceLimit"},
      {"DISPATCH_FAILED", "JobLaunchFailure"},
      {"ARRAY_LIMIT", "JobArrayTaskLimit"},
      {"HOST_RESERVED", "ReqNodeNotAvail"},
      {"RESERVATION_WAIT", "Reservation"},
      {"RESERVATION_DENIED", "Reservation"},
  };
  for (const Word& w : kWords) {
    if (w.sluice == code) return w.slurm;
  }
  return "None";  // NEW_JOB: not evaluated yet, as Slurm says of a new job
}

}  // namespace

std::string SlurmReason(const CompatJob& job) {
  if (job.state == "HELD") return "JobHeldUser";
  switch (SlurmStateOf(job)) {
    case SlurmState::kPending:
      return std::string(SlurmWaitReason(job.reason));
    case SlurmState::kFailed:
      if (job.cause == "DISPATCH_FAILED") return "JobLaunchFailure";
      if (job.cause == "UNSCHEDULABLE") return "BadConstraints";
      return "NonZeroExitCode";
    case SlurmState::kTimeout:
      return "TimeLimit";
    case SlurmState::kOutOfMemory:
      return "OutOfMemory";
    case SlurmState::kNodeFail:
      return "NodeDown";
    default:
      return "None";
  }
}

std::string SlurmExitCode(const CompatJob& job) {
  if (!job.exit_code) return "0:0";
  const int32_t code = *job.exit_code;
  // Killed by a signal (cancelled, run limit, memory limit): the API says 128 + signal.
  const bool killed = job.state == "CANCELLED" || job.cause == "RUN_LIMIT" ||
                      job.cause == "MEM_LIMIT" || job.cause == "HOST_LOST";
  if (killed && code > 128 && code < 128 + 65) return "0:" + std::to_string(code - 128);
  return std::to_string(code) + ":0";
}

// ---- LSF ----

std::string_view ToString(LsfStat stat) {
  switch (stat) {
    case LsfStat::kPend:
      return "PEND";
    case LsfStat::kPsusp:
      return "PSUSP";
    case LsfStat::kRun:
      return "RUN";
    case LsfStat::kDone:
      return "DONE";
    case LsfStat::kExit:
      return "EXIT";
  }
  return "UNKWN";
}

LsfStat LsfStatOf(const CompatJob& job) {
  if (job.state == "HELD") return LsfStat::kPsusp;
  if (job.state == "RUNNING" || job.state == "ADMITTING") return LsfStat::kRun;
  if (job.state == "DONE") return LsfStat::kDone;
  if (job.state == "EXIT" || job.state == "CANCELLED") return LsfStat::kExit;
  return LsfStat::kPend;
}

std::string LsfExitReason(const CompatJob& job) {
  if (job.state == "CANCELLED") return "TERM_OWNER: job killed by owner";
  if (job.state != "EXIT") return "";
  if (job.cause == "RUN_LIMIT") return "TERM_RUNLIMIT: job killed after reaching LSF run time limit";
  if (job.cause == "MEM_LIMIT") {
    return "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit";
  }
  if (job.cause == "HOST_LOST") return "TERM_LOAD: job killed after its host was lost";
  if (job.cause == "DISPATCH_FAILED") return "TERM_UNKNOWN: job could not be launched";
  if (job.cause == "UNSCHEDULABLE") return "TERM_UNKNOWN: job can never run";
  return "";
}

std::string LsfPendReason(const CompatJob& job) {
  if (job.state == "HELD") return "The job was suspended by the user while pending";
  if (LsfStatOf(job) != LsfStat::kPend) return "";
  if (job.reason.empty() || job.reason == "NEW_JOB") return "New job is waiting for scheduling";
  if (job.reason == "DEPENDENCY") return "Job dependency condition not satisfied";
  if (job.reason == "BEGIN_TIME") return "The job has a specified start time";
  if (job.reason == "QUEUE_INACTIVE") return "The queue is inactivated by the administrator";
  if (job.reason == "NO_RESOURCE") return "Not enough job slot(s)";
  return job.reason_text.empty() ? job.reason : job.reason_text;
}

}  // namespace sluice::client::compat
