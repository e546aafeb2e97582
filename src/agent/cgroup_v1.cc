// The cgroup v1 implementation of Cgroups (legacy and hybrid layouts); see cgroup.h.
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <climits>
#include <cstring>
#include <map>
#include <sstream>

#include "agent/cgroup.h"
#include "agent/cgroup_internal.h"
#include "agent/cpu_topology.h"

namespace sluice::agent::cgroup_internal {
namespace {

// A v1 memory limit this large means "no limit" (PAGE_COUNTER_MAX rounded to pages).
constexpr int64_t kUnlimitedBytes = int64_t{1} << 62;

class CgroupV1 final : public Cgroups {
 public:
  // `controllers`: controller -> the hierarchy's directory holding the agent's sub-tree;
  // co-mounted controllers (cpu,cpuacct) share one directory.
  CgroupV1(std::string fs_root, std::string path, std::map<std::string, std::string> controllers)
      : fs_root_(std::move(fs_root)), path_(std::move(path)), controllers_(std::move(controllers)) {
    for (const auto& [controller, dir] : controllers_) {
      bool seen = false;
      for (const std::string& known : dirs_) seen = seen || known == dir;
      if (!seen) dirs_.push_back(dir);
    }
  }

  CgroupMode mode() const override { return CgroupMode::kV1; }
  bool FencesDevices() const override { return controllers_.contains("devices"); }
  bool BindsCpus() const override { return controllers_.contains("cpuset"); }
  std::vector<std::string> AgentDirs() const override { return dirs_; }

  Status Create(int64_t job, const CgroupLimits& limits) override {
    bool leftover = false;
    for (const std::string& dir : dirs_) leftover = leftover || IsDirectory(JobDir(dir, job));
    if (leftover) {
      Signal(job, SIGKILL);
      WaitUntil([&] { return Empty(job); }, std::chrono::milliseconds(1000));
      SLUICE_RETURN_IF_ERROR(Remove(job));
    }
    for (const std::string& dir : dirs_) {
      const std::string job_dir = JobDir(dir, job);
      if (mkdir(job_dir.c_str(), 0755) != 0) {
        Status failed = Internal("mkdir " + job_dir + ": " + std::strerror(errno));
        (void)Remove(job);
        return failed;
      }
    }
    Status status = SetLimits(job, limits);
    if (!status.ok()) (void)Remove(job);
    return status;
  }

  std::vector<std::string> ProcsFiles(int64_t job) const override {
    std::vector<std::string> files;
    for (const std::string& dir : dirs_) files.push_back(JobDir(dir, job) + "/cgroup.procs");
    return files;
  }

  // Freeze, signal every pid, thaw: a frozen process can neither fork nor exit, so the list
  // is complete and no pid is reused before it is signalled.
  void Signal(int64_t job, int signal) override {
    std::string state_file;
    if (auto it = controllers_.find("freezer"); it != controllers_.end()) {
      state_file = JobDir(it->second, job) + "/freezer.state";
      if (!WriteText(state_file, "FROZEN").ok()) state_file.clear();
    }
    if (!state_file.empty()) {
      WaitUntil([&] { return ReadText(state_file).value_or("").starts_with("FROZEN"); },
                std::chrono::milliseconds(100));
    }
    for (pid_t pid : ReadPids(JobDir(dirs_.front(), job) + "/cgroup.procs")) kill(pid, signal);
    if (!state_file.empty()) (void)WriteText(state_file, "THAWED");
  }

  bool Empty(int64_t job) const override {
    for (const std::string& dir : dirs_) {
      if (!ReadPids(JobDir(dir, job) + "/cgroup.procs").empty()) return false;
    }
    return true;
  }

  CgroupUsage Usage(int64_t job) const override {
    CgroupUsage usage;
    if (auto it = controllers_.find("cpuacct"); it != controllers_.end()) {
      if (auto ns = ReadInt(JobDir(it->second, job) + "/cpuacct.usage")) {
        usage.cpu_seconds = *ns / 1e9;
      }
    }
    if (auto it = controllers_.find("memory"); it != controllers_.end()) {
      const std::string dir = JobDir(it->second, job);
      if (auto peak = ReadInt(dir + "/memory.max_usage_in_bytes"))
        usage.peak_mb = *peak / 1048576.0;
      auto limit = ReadInt(dir + "/memory.limit_in_bytes");
      if (limit && *limit < kUnlimitedBytes) usage.memory_limit_mb = BytesToMb(*limit);
      usage.oom_kills = ReadKeyed(dir + "/memory.oom_control", "oom_kill").value_or(0);
    }
    return usage;
  }

  Status Remove(int64_t job) override {
    Status result = Status::Ok();
    for (const std::string& dir : dirs_) {
      Status removed = RemoveCgroupDir(JobDir(dir, job));
      if (!removed.ok() && result.ok()) result = removed;
    }
    return result;
  }

  void RemoveAgentDirs() override {
    for (const auto& [controller, dir] : controllers_) {
      RemoveDirChain(fs_root_ + "/" + controller, path_);
    }
  }

 private:
  static std::string JobDir(const std::string& dir, int64_t job) {
    return dir + "/" + JobCgroupName(job);
  }

  Status SetLimits(int64_t job, const CgroupLimits& limits) const {
    if (auto it = controllers_.find("memory"); it != controllers_.end() && limits.memory_mb) {
      const std::string dir = JobDir(it->second, job);
      const std::string bytes = std::to_string(*limits.memory_mb << 20);
      SLUICE_RETURN_IF_ERROR(WriteText(dir + "/memory.limit_in_bytes", bytes));
      // memory + swap, so that the job cannot swap past its limit (after the memory limit:
      // the kernel keeps memsw >= memory).
      if (IsFile(dir + "/memory.memsw.limit_in_bytes")) {
        SLUICE_RETURN_IF_ERROR(WriteText(dir + "/memory.memsw.limit_in_bytes", bytes));
      }
    }
    if (auto it = controllers_.find("cpu"); it != controllers_.end() && limits.cpus) {
      const std::string dir = JobDir(it->second, job);
      SLUICE_RETURN_IF_ERROR(WriteText(dir + "/cpu.cfs_period_us", "100000"));
      SLUICE_RETURN_IF_ERROR(
          WriteText(dir + "/cpu.cfs_quota_us", std::to_string(*limits.cpus * 100000)));
    }
    if (auto it = controllers_.find("pids"); it != controllers_.end() && limits.pids) {
      SLUICE_RETURN_IF_ERROR(
          WriteText(JobDir(it->second, job) + "/pids.max", std::to_string(*limits.pids)));
    }
    if (auto it = controllers_.find("cpuset"); it != controllers_.end() || HasCpusetFiles()) {
      // A v1 cpuset starts with no CPUs and no nodes, and takes no process until it has both
      // (a hierarchy co-mounted with cpuset is one too).
      if (it == controllers_.end()) it = CpusetDir();
      const std::string dir = JobDir(it->second, job);
      const std::string cpus = limits.cpuset.empty()
                                   ? ReadText(it->second + "/cpuset.cpus").value_or("")
                                   : FormatCpuList(limits.cpuset);
      const std::string mems = limits.mems.empty()
                                   ? ReadText(it->second + "/cpuset.mems").value_or("")
                                   : FormatCpuList(limits.mems);
      SLUICE_RETURN_IF_ERROR(WriteText(dir + "/cpuset.cpus", cpus));
      SLUICE_RETURN_IF_ERROR(WriteText(dir + "/cpuset.mems", mems));
    }
    if (auto it = controllers_.find("devices"); it != controllers_.end()) {
      // One rule per write: the kernel parses a single rule from each.
      const std::string deny = JobDir(it->second, job) + "/devices.deny";
      for (const DeviceRule& rule : limits.deny) {
        SLUICE_RETURN_IF_ERROR(AppendText(deny, std::string(1, rule.type) + " " +
                                                    std::to_string(rule.major) + ":" +
                                                    std::to_string(rule.minor) + " rwm"));
      }
    }
    return Status::Ok();
  }

  // A hierarchy of controllers_ whose directory is a cpuset (co-mounted with it), if any.
  std::map<std::string, std::string>::const_iterator CpusetDir() const {
    for (auto it = controllers_.begin(); it != controllers_.end(); ++it) {
      if (IsFile(it->second + "/cpuset.cpus")) return it;
    }
    return controllers_.end();
  }
  bool HasCpusetFiles() const { return CpusetDir() != controllers_.end(); }

  std::string fs_root_;
  std::string path_;
  std::map<std::string, std::string> controllers_;
  std::vector<std::string> dirs_;  // distinct directories of controllers_, creation order
};

// Gives each empty cpuset level of `relative` under `base` its parent's CPUs and nodes: a v1
// cpuset is made empty, and the job cgroups below copy the agent's.
Status InheritCpuset(const std::string& base, const std::string& relative) {
  std::string parent = base;
  std::istringstream parts(relative);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty()) continue;
    const std::string dir = parent + "/" + part;
    for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
      const std::string have = ReadText(dir + "/" + file).value_or("");
      if (have.find_first_not_of(" \n") != std::string::npos) continue;
      SLUICE_RETURN_IF_ERROR(
          WriteText(dir + "/" + file, ReadText(parent + "/" + file).value_or("")));
    }
    parent = dir;
  }
  return Status::Ok();
}

// The canonical path of `path`, or `path` itself if it cannot be resolved.
std::string Canonical(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

}  // namespace

Result<std::unique_ptr<Cgroups>> OpenV1(const CgroupOptions& options) {
  // 1. The agent's directory in every hierarchy present; co-mounted ones resolve to one.
  std::map<std::string, std::string> controllers;
  std::map<std::string, std::string> by_mount;  // canonical mount -> agent dir
  for (const std::string& name : V1Hierarchies(options.fs_root, options.cpuset)) {
    const std::string mount = Canonical(options.fs_root + "/" + name);
    if (auto it = by_mount.find(mount); it != by_mount.end()) {
      controllers[name] = it->second;
      continue;
    }
    SLUICE_RETURN_IF_ERROR(MakeDirs(mount, options.path));
    // Any hierarchy cpuset is mounted with (cpu,cpuset too): its empty levels take no process.
    if (IsFile(mount + "/cpuset.cpus")) SLUICE_RETURN_IF_ERROR(InheritCpuset(mount, options.path));
    controllers[name] = by_mount[mount] = mount + "/" + options.path;
  }
  // 2. Stale job cgroups of a crashed predecessor.
  auto cgroups = std::make_unique<CgroupV1>(options.fs_root, options.path, controllers);
  RemoveStaleJobs(*cgroups, cgroups->AgentDirs(), options.keep);
  return std::unique_ptr<Cgroups>(std::move(cgroups));
}

}  // namespace sluice::agent::cgroup_internal
