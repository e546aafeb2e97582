#include "client/compat/slurm_show.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "client/compat/slurm_values.h"

namespace sluice::client::compat {
namespace {

std::string OrNull(const std::string& text) { return text.empty() ? "(null)" : text; }

int64_t RunSeconds(const CompatJob& job, int64_t now) {
  if (!job.Started()) return 0;
  return std::max<int64_t>(0, (job.end_time > 0 ? job.end_time : now) - job.start_time);
}

std::vector<std::string> HostNames(const CompatJob& job) {
  std::vector<std::string> names;
  for (const auto& [host, slots] : job.hosts) names.push_back(host);
  return names;
}

int32_t NodeCount(const CompatJob& job) {
  return job.hosts.empty() ? 1 : static_cast<int32_t>(job.hosts.size());
}

std::string TimeLimit(const CompatJob& job) {
  return job.run_limit && *job.run_limit > 0 ? SlurmClock(*job.run_limit) : "UNLIMITED";
}

std::string UserWithId(const std::string& name, int64_t id) {
  return (name.empty() ? "nobody" : name) + "(" + (id >= 0 ? std::to_string(id) : "-2") + ")";
}

// The job's output file as Slurm shows it: the pattern expanded, /dev/null for none.
std::string OutputPath(const CompatJob& job, const std::string& pattern) {
  return pattern.empty() ? "/dev/null" : job.Expand(pattern);
}

}  // namespace

std::string ScontrolShowJob(const CompatJob& job, bool details, int64_t now) {
  const SlurmState state = SlurmStateOf(job);
  const std::string nodes = CompressHostList(HostNames(job));
  const int32_t cpus = job.Slots();
  std::ostringstream out;
  out << "JobId=" << job.SlurmId() << " JobName=" << job.name << "\n";
  out << "   UserId=" << UserWithId(job.user, job.uid)
      << " GroupId=" << UserWithId(job.group, job.gid) << " MCS_label=N/A\n";
  out << "   Priority=" << job.priority << " Nice=0 Account=" << OrNull(job.project)
      << " QOS=(null)\n";
  out << "   JobState=" << ToString(state) << " Reason=" << SlurmReason(job)
      << " Dependency=" << OrNull(job.depend) << "\n";
  out << "   Requeue=1 Restarts=0 BatchFlag=" << (job.script ? 1 : 1) << " Reboot=0 ExitCode="
      << SlurmExitCode(job) << "\n";
  if (details) out << "   DerivedExitCode=0:0\n";
  out << "   RunTime=" << SlurmClock(RunSeconds(job, now)) << " TimeLimit=" << TimeLimit(job)
      << " TimeMin=N/A\n";
  const int64_t eligible = std::max(job.submit_time, job.begin);
  out << "   SubmitTime=" << SlurmDateTime(job.submit_time)
      << " EligibleTime=" << SlurmDateTime(eligible) << "\n";
  out << "   AccrueTime=" << SlurmDateTime(job.Started() ? eligible : 0) << "\n";
  int64_t end = job.end_time;
  if (end == 0 && job.Started() && job.run_limit && *job.run_limit > 0) {
    end = job.start_time + *job.run_limit;  // Slurm shows the limit's end while running
  }
  out << "   StartTime=" << SlurmDateTime(job.start_time) << " EndTime=" << SlurmDateTime(end)
      << " Deadline=N/A\n";
  out << "   SuspendTime=None SecsPreSuspend=0 LastSchedEval="
      << SlurmDateTime(job.Started() ? job.start_time : job.submit_time) << " Scheduler=Main\n";
  out << "   Partition=" << job.queue << " AllocNode:Sid=localhost:0\n";
  out << "   ReqNodeList=(null) ExcNodeList=(null)\n";
  out << "   NodeList=" << nodes << "\n";
  if (!nodes.empty()) out << "   BatchHost=" << job.hosts.front().first << "\n";
  out << "   NumNodes=" << NodeCount(job) << " NumCPUs=" << cpus << " NumTasks=" << job.tasks
      << " CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n";
  out << "   TRES=cpu=" << cpus << ",node=" << NodeCount(job) << ",billing=" << cpus << "\n";
  out << "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n";
  if (details && state == SlurmState::kRunning) {
    out << "   JOB_GRES=(null)\n";
    for (const auto& [host, slots] : job.hosts) {
      out << "     Nodes=" << host << " CPU_IDs=0-" << (slots - 1) << " Mem=0 GRES=\n";
    }
  }
  out << "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n";
  out << "   Features=(null) DelayBoot=00:00:00\n";
  out << "   OverSubscribe=" << (job.exclusive ? "NO" : "OK")
      << " Contiguous=0 Licenses=(null) Network=(null)\n";
  out << "   Command=" << (job.script ? job.command : "(null)") << "\n";
  out << "   WorkDir=" << job.cwd << "\n";
  out << "   StdErr=" << OutputPath(job, job.error.empty() ? job.output : job.error) << "\n";
  out << "   StdIn=/dev/null\n";
  out << "   StdOut=" << OutputPath(job, job.output) << "\n";
  out << "   Power=\n   \n\n";
  return out.str();
}

// ---- squeue ----

Result<std::vector<SqueueField>> ParseSqueueFormat(std::string_view format) {
  static constexpr std::string_view kLetters = "iAjuaPtTMlDCNRrQVSZo";
  std::vector<SqueueField> fields;
  SqueueField current;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      current.literal += format[i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      current.literal += '%';
      ++i;
      continue;
    }
    size_t j = i + 1;
    if (j < format.size() && format[j] == '.') {
      current.right = true;
      ++j;
    }
    while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j]))) {
      current.width = current.width * 10 + (format[j] - '0');
      if (current.width > 1000) return InvalidArgument("format width above 1000");
      ++j;
    }
    if (j == format.size() || kLetters.find(format[j]) == std::string_view::npos) {
      return InvalidArgument("format field '" + std::string(format.substr(i, j + 1 - i)) +
                             "' is not supported (expected one of %i %A %j %u %a %P %t %T %M "
                             "%l %D %C %N %R %r %Q %V %S %Z %o)");
    }
    current.letter = format[j];
    fields.push_back(std::move(current));
    current = SqueueField{};
    i = j;
  }
  if (!current.literal.empty()) fields.push_back(std::move(current));
  return fields;
}

namespace {

std::string Pad(std::string text, int width, bool right) {
  if (width <= 0) return text;
  if (static_cast<int>(text.size()) > width) text.resize(static_cast<size_t>(width));
  const std::string fill(static_cast<size_t>(width) - text.size(), ' ');
  return right ? fill + text : text + fill;
}

std::string_view SqueueTitle(char letter) {
  switch (letter) {
    case 'i':
    case 'A':
      return "JOBID";
    case 'j':
      return "NAME";
    case 'u':
      return "USER";
    case 'a':
      return "ACCOUNT";
    case 'P':
      return "PARTITION";
    case 't':
      return "ST";
    case 'T':
      return "STATE";
    case 'M':
      return "TIME";
    case 'l':
      return "TIME_LIMIT";
    case 'D':
      return "NODES";
    case 'C':
      return "CPUS";
    case 'N':
      return "NODELIST";
    case 'R':
      return "NODELIST(REASON)";
    case 'r':
      return "REASON";
    case 'Q':
      return "PRIORITY";
    case 'V':
      return "SUBMIT_TIME";
    case 'S':
      return "START_TIME";
    case 'Z':
      return "WORK_DIR";
    case 'o':
      return "COMMAND";
  }
  return "";
}

std::string SqueueValue(char letter, const CompatJob& job, int64_t now) {
  switch (letter) {
    case 'i':
    case 'A':
      return job.SlurmId();
    case 'j':
      return job.name;
    case 'u':
      return job.user;
    case 'a':
      return OrNull(job.project);
    case 'P':
      return job.queue;
    case 't':
      return std::string(ShortCode(SlurmStateOf(job)));
    case 'T':
      return std::string(ToString(SlurmStateOf(job)));
    case 'M':
      return SlurmElapsed(RunSeconds(job, now));
    case 'l':
      return job.run_limit && *job.run_limit > 0 ? SlurmElapsed(*job.run_limit) : "UNLIMITED";
    case 'D':
      return std::to_string(NodeCount(job));
    case 'C':
      return std::to_string(job.Slots());
    case 'N':
      return CompressHostList(HostNames(job));
    case 'R':
      return SlurmStateOf(job) == SlurmState::kPending ? "(" + SlurmReason(job) + ")"
                                                        : CompressHostList(HostNames(job));
    case 'r':
      return SlurmReason(job);
    case 'Q':
      return std::to_string(job.priority);
    case 'V':
      return SlurmDateTime(job.submit_time);
    case 'S':
      return job.Started() ? SlurmDateTime(job.start_time) : "N/A";
    case 'Z':
      return job.cwd;
    case 'o':
      return job.command;
  }
  return "";
}

}  // namespace

std::string SqueueHeader(const std::vector<SqueueField>& format) {
  std::string out;
  for (const SqueueField& f : format) {
    out += f.literal;
    if (f.letter != 0) out += Pad(std::string(SqueueTitle(f.letter)), f.width, f.right);
  }
  return out + "\n";
}

std::string SqueueLine(const std::vector<SqueueField>& format, const CompatJob& job, int64_t now) {
  std::string out;
  for (const SqueueField& f : format) {
    out += f.literal;
    if (f.letter != 0) out += Pad(SqueueValue(f.letter, job, now), f.width, f.right);
  }
  return out + "\n";
}

// ---- sacct ----

namespace {

struct SacctColumn {
  std::string_view name;
  int width;
};
constexpr SacctColumn kSacctColumns[] = {
    {"JobID", 12},    {"JobIDRaw", 12},  {"JobName", 10},   {"User", 9},     {"Account", 10},
    {"Partition", 10}, {"State", 10},    {"ExitCode", 8},   {"AllocCPUS", 10}, {"NNodes", 8},
    {"NodeList", 15}, {"Submit", 19},    {"Start", 19},     {"End", 19},     {"Elapsed", 10},
    {"ElapsedRaw", 10}, {"Timelimit", 10}, {"WorkDir", 20}, {"MaxRSS", 10},  {"TotalCPU", 10},
    {"CPUTimeRAW", 10},
};

bool SameWord(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string SacctValue(std::string_view name, const CompatJob& job, int64_t now) {
  const int64_t run = RunSeconds(job, now);
  if (name == "JobID" || name == "JobIDRaw") return job.SlurmId();
  if (name == "JobName") return job.name;
  if (name == "User") return job.user;
  if (name == "Account") return job.project;
  if (name == "Partition") return job.queue;
  if (name == "State") return std::string(ToString(SlurmStateOf(job)));
  if (name == "ExitCode") return SlurmExitCode(job);
  if (name == "AllocCPUS") return std::to_string(job.Started() ? job.Slots() : 0);
  if (name == "NNodes") return std::to_string(NodeCount(job));
  if (name == "NodeList") {
    return job.hosts.empty() ? "None assigned" : CompressHostList(HostNames(job));
  }
  if (name == "Submit") return SlurmDateTime(job.submit_time);
  if (name == "Start") return SlurmDateTime(job.start_time);
  if (name == "End") return SlurmDateTime(job.end_time);
  if (name == "Elapsed") return SlurmClock(run);
  if (name == "ElapsedRaw") return std::to_string(run);
  if (name == "Timelimit") return TimeLimit(job);
  if (name == "WorkDir") return job.cwd;
  if (name == "MaxRSS") {
    return job.max_rss_mb ? std::to_string(static_cast<int64_t>(*job.max_rss_mb * 1024)) + "K"
                          : "";
  }
  if (name == "TotalCPU") return job.cpu_seconds ? SlurmClock(int64_t(*job.cpu_seconds)) : "";
  if (name == "CPUTimeRAW") return std::to_string(run * (job.Started() ? job.Slots() : 0));
  return "";
}

}  // namespace

Result<std::vector<SacctField>> ParseSacctFields(std::string_view list) {
  std::vector<SacctField> fields;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    int width = 0;
    if (const size_t percent = item.find('%'); percent != std::string_view::npos) {
      for (char c : item.substr(percent + 1)) {
        if (!std::isdigit(static_cast<unsigned char>(c)) || width > 1000) {
          return InvalidArgument("Invalid field width in '" + std::string(item) + "'");
        }
        width = width * 10 + (c - '0');
      }
      item = item.substr(0, percent);
    }
    const SacctColumn* column = nullptr;
    for (const SacctColumn& c : kSacctColumns) {
      if (SameWord(c.name, item)) column = &c;
    }
    if (column == nullptr) return InvalidArgument("Invalid field requested: \"" + std::string(item) + "\"");
    fields.push_back({std::string(column->name), width > 0 ? width : column->width});
  }
  if (fields.empty()) return InvalidArgument("no fields requested");
  return fields;
}

std::string SacctHeader(const std::vector<SacctField>& fields, bool parsable) {
  std::string names;
  std::string rules;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (parsable) {
      names += (i > 0 ? "|" : "") + fields[i].name;
      continue;
    }
    names += Pad(fields[i].name, fields[i].width, true) + " ";
    rules += std::string(static_cast<size_t>(fields[i].width), '-') + " ";
  }
  return parsable ? names + "\n" : names + "\n" + rules + "\n";
}

std::string SacctLine(const std::vector<SacctField>& fields, const CompatJob& job, bool parsable,
                      int64_t now) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string value = SacctValue(fields[i].name, job, now);
    if (parsable) {
      out += (i > 0 ? "|" : "") + value;
    } else {
      out += Pad(value, fields[i].width, true) + " ";
    }
  }
  return out + "\n";
}

}  // namespace sluice::client::compat
