#include "client/compat/lsf_show.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sluice::client::compat {
namespace {

std::string Column(std::string text, size_t width, bool wide) {
  if (!wide && text.size() > width) text = "*" + text.substr(text.size() - (width - 1));
  if (text.size() < width) text += std::string(width - text.size(), ' ');
  return text;
}

std::string ExecHosts(const CompatJob& job) {
  std::string out;
  for (const auto& [host, slots] : job.hosts) {
    if (!out.empty()) out += ':';
    out += slots > 1 ? std::to_string(slots) + "*" + host : host;
  }
  return out;
}

int64_t RunSeconds(const CompatJob& job, int64_t now) {
  if (!job.Started()) return 0;
  return std::max<int64_t>(0, (job.end_time > 0 ? job.end_time : now) - job.start_time);
}

std::string LongTime(int64_t unix_seconds) {
  const time_t t = static_cast<time_t>(unix_seconds);
  std::tm local{};
  localtime_r(&t, &local);
  char text[64];
  std::strftime(text, sizeof text, "%a %b %e %H:%M:%S %Y", &local);
  return text;
}

constexpr std::string_view kFields[] = {
    "jobid",      "stat",        "user",        "queue",       "job_name",    "proj_name",
    "from_host",  "exec_host",   "nexec_host",  "slots",       "command",     "cwd",
    "exit_code",  "exit_reason", "pend_reason", "submit_time", "start_time",  "finish_time",
    "cpu_used",   "max_mem",     "run_time"};

std::string FieldValue(std::string_view field, const CompatJob& job, int64_t now) {
  if (field == "jobid") return job.LsfId();
  if (field == "stat") return std::string(ToString(LsfStatOf(job)));
  if (field == "user") return job.user;
  if (field == "queue") return job.queue;
  if (field == "job_name") return job.name;
  if (field == "proj_name") return job.project.empty() ? "default" : job.project;
  if (field == "from_host") return "localhost";
  if (field == "exec_host") return ExecHosts(job);
  if (field == "nexec_host") return job.hosts.empty() ? "" : std::to_string(job.hosts.size());
  if (field == "slots") return std::to_string(job.Slots());
  if (field == "command") return job.command;
  if (field == "cwd") return job.cwd;
  if (field == "exit_code") {
    return LsfStatOf(job) == LsfStat::kExit && job.exit_code ? std::to_string(*job.exit_code)
                                                             : "";
  }
  if (field == "exit_reason") return LsfExitReason(job);
  if (field == "pend_reason") {
    const std::string reason = LsfPendReason(job);
    return reason.empty() ? "" : reason + ";";
  }
  if (field == "submit_time") return LsfTime(job.submit_time);
  if (field == "start_time") return LsfTime(job.start_time);
  if (field == "finish_time") return LsfTime(job.end_time);
  if (field == "cpu_used") {
    return job.cpu_seconds ? std::to_string(static_cast<int64_t>(*job.cpu_seconds)) + " second(s)"
                           : "";
  }
  if (field == "max_mem") {
    return job.max_rss_mb ? std::to_string(static_cast<int64_t>(*job.max_rss_mb)) + " Mbytes"
                          : "";
  }
  if (field == "run_time") return std::to_string(RunSeconds(job, now)) + " second(s)";
  return "";
}

std::string Upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::string LsfTime(int64_t unix_seconds) {
  if (unix_seconds <= 0) return "-";
  const time_t t = static_cast<time_t>(unix_seconds);
  std::tm local{};
  localtime_r(&t, &local);
  char text[32];
  std::strftime(text, sizeof text, "%b %e %H:%M", &local);
  return text;
}

std::string BjobsHeader() {
  return "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME\n";
}

std::string BjobsLine(const CompatJob& job, bool wide) {
  return Column(job.LsfId(), 7, wide) + " " + Column(job.user, 7, wide) + " " +
         Column(std::string(ToString(LsfStatOf(job))), 5, wide) + " " +
         Column(job.queue, 10, wide) + " " + Column("localhost", 11, wide) + " " +
         Column(ExecHosts(job), 11, wide) + " " + Column(job.name, 10, wide) + " " +
         LsfTime(job.submit_time) + "\n";
}

Result<BjobsFormat> ParseBjobsFormat(std::string_view text) {
  BjobsFormat format;
  std::istringstream words{std::string(text)};
  std::string word;
  while (words >> word) {
    if (word.starts_with("delimiter=")) {
      std::string value = word.substr(10);
      if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
          value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      if (value.empty()) return InvalidArgument("delimiter: expected a character");
      format.delimiter = value;
      continue;
    }
    std::string name = word.substr(0, word.find(':'));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::find(std::begin(kFields), std::end(kFields), name) == std::end(kFields)) {
      return InvalidArgument(word + ": Illegal job field name");
    }
    format.fields.push_back(name);
  }
  if (format.fields.empty()) return InvalidArgument("-o: expected field names");
  return format;
}

std::string BjobsJson(const BjobsFormat& format, const std::vector<CompatJob>& jobs, int64_t now) {
  std::ostringstream out;
  out << "{\n  \"COMMAND\":\"bjobs\",\n  \"JOBS\":" << jobs.size() << ",\n  \"RECORDS\":[\n";
  for (size_t j = 0; j < jobs.size(); ++j) {
    out << "    {\n";
    for (size_t i = 0; i < format.fields.size(); ++i) {
      out << "      " << nlohmann::json(Upper(format.fields[i])).dump() << ":"
          << nlohmann::json(FieldValue(format.fields[i], jobs[j], now)).dump()
          << (i + 1 < format.fields.size() ? "," : "") << "\n";
    }
    out << "    }" << (j + 1 < jobs.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  return out.str();
}

std::string BjobsColumns(const BjobsFormat& format, const std::vector<CompatJob>& jobs,
                         int64_t now) {
  std::string out;
  for (size_t i = 0; i < format.fields.size(); ++i) {
    out += (i > 0 ? format.delimiter : "") + Upper(format.fields[i]);
  }
  out += "\n";
  for (const CompatJob& job : jobs) {
    for (size_t i = 0; i < format.fields.size(); ++i) {
      const std::string value = FieldValue(format.fields[i], job, now);
      out += (i > 0 ? format.delimiter : "") + (value.empty() ? "-" : value);
    }
    out += "\n";
  }
  return out;
}

std::string BjobsLong(const CompatJob& job) {
  std::ostringstream out;
  out << "\nJob <" << job.LsfId() << ">, Job Name <" << job.name << ">, User <" << job.user
      << ">, Project <" << (job.project.empty() ? "default" : job.project) << ">, Status <"
      << ToString(LsfStatOf(job)) << ">, Queue <" << job.queue << ">, Command <" << job.command
      << ">\n";
  out << LongTime(job.submit_time) << ": Submitted from host <localhost>, CWD <" << job.cwd
      << ">;\n";
  if (job.Started()) {
    out << LongTime(job.start_time) << ": Started " << job.Slots() << " Task(s) on Host(s) <"
        << ExecHosts(job) << ">;\n";
  }
  if (LsfStatOf(job) == LsfStat::kDone) {
    out << LongTime(job.end_time) << ": Done successfully. The CPU time used is "
        << static_cast<int64_t>(job.cpu_seconds.value_or(0)) << " seconds;\n";
  } else if (LsfStatOf(job) == LsfStat::kExit) {
    out << LongTime(job.end_time) << ": Exited with exit code " << job.exit_code.value_or(0)
        << ". The CPU time used is " << static_cast<int64_t>(job.cpu_seconds.value_or(0))
        << " seconds;\n";
  }
  if (job.max_rss_mb) {
    out << " MAX MEM: " << static_cast<int64_t>(*job.max_rss_mb) << " Mbytes;\n";
  }
  const std::string pend = LsfPendReason(job);
  if (!pend.empty()) out << " PENDING REASONS:\n " << pend << ";\n";
  return out.str();
}

std::string BhistHeader() {
  return "Summary of time in seconds spent in various states:\n"
         "JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL\n";
}

std::string BhistLine(const CompatJob& job, int64_t now) {
  const int64_t end = job.end_time > 0 ? job.end_time : now;
  const int64_t pend = std::max<int64_t>(0, (job.Started() ? job.start_time : end) - job.submit_time);
  const int64_t run = RunSeconds(job, now);
  const auto cell = [](std::string text, size_t width) {
    if (text.size() > width - 1) text = text.substr(0, width - 1);
    return text + std::string(width - text.size(), ' ');
  };
  return cell(job.LsfId(), 8) + cell(job.user, 8) + cell(job.name, 10) +
         cell(std::to_string(pend), 8) + cell("0", 8) + cell(std::to_string(run), 8) +
         cell("0", 8) + cell("0", 8) + cell("0", 8) + std::to_string(pend + run) + "\n";
}

}  // namespace sluice::client::compat
