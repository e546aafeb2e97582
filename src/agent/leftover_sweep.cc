#include "agent/leftover_sweep.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "agent/job_shepherd.h"

namespace sluice::agent {
namespace {

struct ProcessInfo {
  pid_t pid = 0;
  pid_t pgid = 0;
  uint64_t start = 0;
  bool zombie = false;  // dead, waiting for its parent: nothing left to kill
};

std::vector<pid_t> AllPids() {
  std::vector<pid_t> pids;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && pid > 0) pids.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return pids;
}

// Process group and start time from /proc/PID/stat (fields 5 and 22); false if gone.
bool ReadStat(pid_t pid, ProcessInfo& info) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return false;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  info.pid = pid;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3) info.zombie = field == "Z" || field == "X";
    if (i == 5) info.pgid = static_cast<pid_t>(std::strtol(field.c_str(), nullptr, 10));
    if (i == 22) info.start = std::strtoull(field.c_str(), nullptr, 10);
  }
  return true;
}

// Whether `pid` carries a job marker starting with `prefix` for a job not in `spared`.
bool HasMarker(pid_t pid, const std::string& prefix, const std::set<int64_t>& spared) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string variable;
  while (std::getline(in, variable, '\0')) {
    if (!variable.starts_with(prefix)) continue;
    const int64_t job = std::strtoll(variable.c_str() + prefix.size(), nullptr, 10);
    return !spared.contains(job);
  }
  return false;
}

// One pass: the processes to kill now.
std::vector<pid_t> Leftovers(const std::map<pid_t, uint64_t>& groups, const std::string& prefix,
                             const std::set<int64_t>& spared) {
  std::vector<pid_t> found;
  const pid_t self = getpid();
  for (pid_t pid : AllPids()) {
    ProcessInfo info;
    if (pid == self || !ReadStat(pid, info) || info.zombie) continue;
    auto group = groups.find(info.pgid);
    const bool in_group = group != groups.end() && info.start >= group->second;
    if (in_group || (!prefix.empty() && HasMarker(pid, prefix, spared))) found.push_back(pid);
  }
  return found;
}

wire::ExitReport ReportOf(int64_t job, const ExitRecord& record) {
  wire::ExitReport report{.job = job,
                          .exit_code = record.exit_code,
                          .signal = record.signal,
                          .cpu_seconds = record.cpu_seconds,
                          .max_rss_mb = record.max_rss_mb};
  if (!report.exit_code && report.signal) report.exit_code = 128 + *report.signal;
  return report;
}

}  // namespace

std::string JobMarker(const std::string& instance, int64_t job) {
  return instance + ":" + std::to_string(job);
}

int SweepLeftovers(const std::map<int64_t, JournalLaunch>& launched, const std::string& instance,
                   const std::set<int64_t>& spared, std::chrono::milliseconds timeout) {
  std::map<pid_t, uint64_t> groups;  // pgid -> the leader's start time
  for (const auto& [job, launch] : launched) {
    if (launch.pgid > 1) groups[launch.pgid] = launch.start;
  }
  const std::string prefix =
      instance.empty() ? "" : std::string(kJobMarkerVariable) + "=" + instance + ":";
  if (groups.empty() && prefix.empty()) return 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::set<pid_t> killed;
  while (true) {
    const std::vector<pid_t> found = Leftovers(groups, prefix, spared);
    if (found.empty() || std::chrono::steady_clock::now() >= deadline) break;
    for (pid_t pid : found) {
      if (kill(pid, SIGKILL) == 0) killed.insert(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return static_cast<int>(killed.size());
}

namespace {

// The launches whose shepherds still run their jobs while the previous run's lease holds: the
// jobs a restarted agent may adopt (issue 43).
std::map<int64_t, JournalLaunch> Adoptable(const std::map<int64_t, JournalLaunch>& launched,
                                           const std::string& state_dir) {
  std::map<int64_t, JournalLaunch> adoptable;
  const auto deadline = ReadLeaseDeadline(LeaseFilePath(state_dir));
  if (!deadline || std::chrono::steady_clock::now() >= *deadline) return adoptable;
  for (const auto& [job, launch] : launched) {
    // An interactive job's streams went with the agent that launched it: it is not adopted.
    if (!launch.interactive && ShepherdAlive(launch)) adoptable[job] = launch;
  }
  return adoptable;
}

// Adopts each of `candidates` (`adopt`) that has no exit record yet; returns the adopted.
std::set<int64_t> AdoptEach(const std::map<int64_t, JournalLaunch>& candidates,
                            const std::map<int64_t, ExitRecord>& records, const AdoptFn& adopt,
                            const std::string& host) {
  std::set<int64_t> adopted;
  for (const auto& [job, launch] : candidates) {
    if (records.contains(job)) continue;  // it ended meanwhile: reported from its record
    if (Status s = adopt(launch); !s.ok()) {
      spdlog::warn("agent {}: job {} not adopted: {}", host, job, s.message());
      continue;
    }
    adopted.insert(job);
  }
  return adopted;
}

}  // namespace

Result<std::unique_ptr<AgentJournal>> RecoverAgentState(const std::string& state_dir,
                                                        const std::string& host,
                                                        std::string& instance,
                                                        const AdoptFn& adopt) {
  Result<std::unique_ptr<AgentJournal>> opened = AgentJournal::Open(state_dir);
  if (!opened) return opened.error();
  AgentJournal& journal = **opened;
  if (journal.skipped() > 0) {
    spdlog::warn("agent {}: journal {}: {} torn or unreadable line(s) skipped", host, journal.dir(),
                 journal.skipped());
  }
  if (journal.instance().empty()) {
    if (Status s = journal.SetInstance(instance); !s.ok()) return s;
  } else {
    instance = journal.instance();
  }
  const std::map<int64_t, JournalLaunch> left = journal.launched();
  // 1. The jobs whose shepherds still run them within the previous run's lease are adopted;
  // the others' shepherds kill their jobs (the lease ran out) and record how each ended:
  // wait for them (job_shepherd.h).
  const std::map<int64_t, JournalLaunch> candidates = adopt ? Adoptable(left, state_dir)
                                                            : std::map<int64_t, JournalLaunch>{};
  std::map<int64_t, JournalLaunch> others;
  for (const auto& [job, launch] : left) {
    if (!candidates.contains(job)) others[job] = launch;
  }
  const int stuck = WaitForShepherds(others, std::chrono::seconds(3));
  const std::string records_dir = ExitRecordDir(state_dir);
  if (mkdir(records_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status(StatusCode::kInternal,
                  "cannot create " + records_dir + ": " + std::strerror(errno));
  }
  const std::map<int64_t, ExitRecord> records = ReadExitRecords(records_dir);
  const std::set<int64_t> adopted = AdoptEach(candidates, records, adopt, host);
  // 2. Whatever is left of the jobs not adopted dies.
  std::map<int64_t, JournalLaunch> sweep;
  for (const auto& [job, launch] : left) {
    if (!adopted.contains(job)) sweep[job] = launch;
  }
  const int killed = SweepLeftovers(sweep, instance, adopted);
  // 3. A job that ended by itself is reported as ended, even if the crashed run had not
  // journaled its launch yet; one its shepherd killed (or never recorded) is gone.
  int ended = 0;
  for (const auto& [job, record] : records) {
    if (record.agent_died || journal.exits().contains(job)) continue;
    if (Status s = journal.RecordExit(ReportOf(job, record)); !s.ok()) return s;
    ++ended;
  }
  std::vector<int64_t> gone;
  for (const auto& [job, launch] : journal.launched()) {
    if (!adopted.contains(job)) gone.push_back(job);
  }
  for (int64_t job : gone) {
    if (Status s = journal.RecordGone(job); !s.ok()) return s;
  }
  if (!adopted.empty()) {
    spdlog::info("agent {}: adopted {} running job(s) of its previous run (their shepherds kept "
                 "them running)",
                 host, adopted.size());
  }
  if (left.size() > adopted.size() || killed > 0 || !records.empty()) {
    spdlog::warn(
        "agent {}: {} job(s) of a previous run were still recorded as running and not adopted: "
        "{} had ended (recorded by their shepherds), {} are gone (killed {} leftover "
        "process(es){}); the controller requeues or fails those",
        host, left.size() - adopted.size(), ended, gone.size(), killed,
        stuck > 0 ? ", " + std::to_string(stuck) + " shepherd(s) did not end in 3 s"
                  : std::string());
  }
  if (!journal.exits().empty()) {
    spdlog::info("agent {}: {} exit(s) of a previous run not yet acknowledged: reporting them",
                 host, journal.exits().size());
  }
  return opened;
}

}  // namespace sluice::agent
