#include "agent/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include "agent/cgroup_device_bpf.h"
#include "agent/cgroup_internal.h"
#include "agent/cpu_topology.h"
#include "agent/instance_name.h"

namespace sluice::agent {
namespace cgroup_internal {
namespace {

constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC
constexpr long kCgroup1Magic = 0x27e0eb;    // CGROUP_SUPER_MAGIC

std::string ErrnoText(const std::string& what, const std::string& path, int error) {
  return what + " " + path + ": " + std::strerror(error);
}

}  // namespace

std::optional<std::string> ReadText(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  close(fd);
  return text;
}

namespace {

Status WriteWithFlags(const std::string& path, const std::string& text, int flags) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
  if (fd < 0) return Internal(ErrnoText("open", path, errno));
  const ssize_t wrote = write(fd, text.data(), text.size());
  const int error = errno;
  close(fd);
  if (wrote != static_cast<ssize_t>(text.size())) {
    return Internal(ErrnoText("write", path, wrote < 0 ? error : EIO));
  }
  return Status::Ok();
}

}  // namespace

Status WriteText(const std::string& path, const std::string& text) {
  return WriteWithFlags(path, text, O_TRUNC);
}

Status AppendText(const std::string& path, const std::string& text) {
  return WriteWithFlags(path, text + "\n", O_APPEND);
}

std::optional<int64_t> ReadInt(const std::string& path) {
  std::optional<std::string> text = ReadText(path);
  if (!text) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text->c_str(), &end, 10);
  if (errno != 0 || end == text->c_str()) return std::nullopt;
  return value;
}

std::optional<int64_t> ReadKeyed(const std::string& path, const std::string& key) {
  std::optional<std::string> text = ReadText(path);
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  std::string name;
  int64_t value = 0;
  while (lines >> name >> value) {
    if (name == key) return value;
  }
  return std::nullopt;
}

std::vector<pid_t> ReadPids(const std::string& procs_path) {
  std::vector<pid_t> pids;
  std::optional<std::string> text = ReadText(procs_path);
  if (!text) return pids;
  std::istringstream lines(*text);
  long pid = 0;
  while (lines >> pid) {
    if (pid > 0) pids.push_back(static_cast<pid_t>(pid));
  }
  return pids;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status MakeDirs(const std::string& base, const std::string& relative) {
  std::string dir = base;
  std::istringstream parts(relative);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty()) continue;
    dir += "/" + part;
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return Internal(ErrnoText("mkdir", dir, errno));
    }
  }
  return Status::Ok();
}

Status RemoveCgroupDir(const std::string& dir) {
  if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return Status::Ok();
  if (errno == ENOTEMPTY) {  // a fake tree: interface files are plain files
    if (DIR* listing = opendir(dir.c_str())) {
      while (dirent* entry = readdir(listing)) {
        const std::string path = dir + "/" + entry->d_name;
        if (IsFile(path)) unlink(path.c_str());
      }
      closedir(listing);
    }
    if (rmdir(dir.c_str()) == 0) return Status::Ok();
  }
  const int error = errno;
  if (error == EBUSY) return Status(StatusCode::kUnavailable, ErrnoText("rmdir", dir, error));
  return Internal(ErrnoText("rmdir", dir, error));
}

void RemoveDirChain(const std::string& base, const std::string& relative) {
  std::string path = relative;
  while (!path.empty()) {
    if (!RemoveCgroupDir(base + "/" + path).ok()) return;
    const size_t slash = path.rfind('/');
    path = slash == std::string::npos ? "" : path.substr(0, slash);
  }
}

std::vector<int64_t> ListJobCgroups(const std::string& dir) {
  std::vector<int64_t> jobs;
  DIR* listing = opendir(dir.c_str());
  if (listing == nullptr) return jobs;
  while (dirent* entry = readdir(listing)) {
    std::string_view name(entry->d_name);
    if (!name.starts_with("job_")) continue;
    char* end = nullptr;
    const long long job = std::strtoll(entry->d_name + 4, &end, 10);
    if (end != nullptr && *end == '\0' && end != entry->d_name + 4) jobs.push_back(job);
  }
  closedir(listing);
  return jobs;
}

bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void RemoveStaleJobs(Cgroups& cgroups, const std::vector<std::string>& listing_dirs,
                     const std::set<int64_t>& keep) {
  std::set<int64_t> jobs;
  for (const std::string& dir : listing_dirs) {
    for (int64_t job : ListJobCgroups(dir)) {
      if (!keep.contains(job)) jobs.insert(job);
    }
  }
  for (int64_t job : jobs) {
    cgroups.Signal(job, SIGKILL);
    WaitUntil([&] { return cgroups.Empty(job); }, std::chrono::milliseconds(2000));
    (void)cgroups.Remove(job);  // best effort: a stuck process keeps it; retried next start
  }
}

int64_t BytesToMb(int64_t bytes) { return (bytes + (1 << 20) - 1) >> 20; }

std::vector<std::string> V1Hierarchies(const std::string& fs_root, bool cpuset) {
  std::vector<std::string> present;
  for (const char* name : {"memory", "cpu", "cpuacct", "pids", "freezer", "devices", "cpuset"}) {
    if (std::string_view(name) == "cpuset" && !cpuset) continue;
    if (IsFile(fs_root + "/" + name + "/cgroup.procs")) present.push_back(name);
  }
  return present;
}

bool HasWord(const std::string& list, const std::string& word) {
  std::istringstream words(list);
  std::string each;
  while (words >> each) {
    if (each == word) return true;
  }
  return false;
}

namespace {

// The unified tree (cgroup v2).
class CgroupV2 final : public Cgroups {
 public:
  CgroupV2(std::string fs_root, std::string path, bool cpuset)
      : fs_root_(std::move(fs_root)), path_(std::move(path)), dir_(fs_root_ + "/" + path_) {
    binds_cpus_ =
        cpuset && HasWord(ReadText(dir_ + "/cgroup.subtree_control").value_or(""), "cpuset");
  }

  CgroupMode mode() const override { return CgroupMode::kV2; }
  std::vector<std::string> AgentDirs() const override { return {dir_}; }

  Status Create(int64_t job, const CgroupLimits& limits) override {
    const std::string dir = JobDir(job);
    if (IsDirectory(dir)) {
      Signal(job, SIGKILL);
      WaitUntil([&] { return Empty(job); }, std::chrono::milliseconds(1000));
      SLUICE_RETURN_IF_ERROR(Remove(job));
    }
    if (mkdir(dir.c_str(), 0755) != 0) return Internal(ErrnoText("mkdir", dir, errno));
    Status status = SetLimits(dir, limits);
    if (status.ok() && !limits.deny.empty()) status = AttachDeviceFence(dir, limits.deny);
    if (!status.ok()) (void)Remove(job);
    return status;
  }

  // Through an eBPF device program on the job's cgroup (cgroup_device_bpf.h).
  bool FencesDevices() const override { return true; }
  bool BindsCpus() const override { return binds_cpus_; }

  std::vector<std::string> ProcsFiles(int64_t job) const override {
    return {JobDir(job) + "/cgroup.procs"};
  }

  void Signal(int64_t job, int signal) override {
    const std::string dir = JobDir(job);
    if (signal == SIGKILL && IsFile(dir + "/cgroup.kill")) {
      (void)WriteText(dir + "/cgroup.kill", "1");
      return;
    }
    // Before Linux 5.14 (no cgroup.kill), and for other signals: freeze, signal, thaw.
    const bool frozen =
        IsFile(dir + "/cgroup.freeze") && WriteText(dir + "/cgroup.freeze", "1").ok();
    if (frozen) {
      WaitUntil([&] { return ReadKeyed(dir + "/cgroup.events", "frozen") == 1; },
                std::chrono::milliseconds(100));
    }
    for (pid_t pid : ReadPids(dir + "/cgroup.procs")) kill(pid, signal);
    if (frozen) (void)WriteText(dir + "/cgroup.freeze", "0");
  }

  bool Empty(int64_t job) const override { return ReadPids(JobDir(job) + "/cgroup.procs").empty(); }

  CgroupUsage Usage(int64_t job) const override {
    const std::string dir = JobDir(job);
    CgroupUsage usage;
    if (auto usec = ReadKeyed(dir + "/cpu.stat", "usage_usec")) usage.cpu_seconds = *usec / 1e6;
    if (auto peak = ReadInt(dir + "/memory.peak")) usage.peak_mb = *peak / 1048576.0;
    if (auto limit = ReadInt(dir + "/memory.max")) usage.memory_limit_mb = BytesToMb(*limit);
    usage.oom_kills = ReadKeyed(dir + "/memory.events", "oom_kill").value_or(0);
    return usage;
  }

  Status Remove(int64_t job) override { return RemoveCgroupDir(JobDir(job)); }

  void RemoveAgentDirs() override { RemoveDirChain(fs_root_, path_); }

 private:
  std::string JobDir(int64_t job) const { return dir_ + "/" + JobCgroupName(job); }

  static Status SetLimits(const std::string& dir, const CgroupLimits& limits) {
    if (limits.memory_mb) {
      SLUICE_RETURN_IF_ERROR(
          WriteText(dir + "/memory.max", std::to_string(*limits.memory_mb << 20)));
      // Without this the job would swap instead of meeting its limit.
      if (IsFile(dir + "/memory.swap.max")) {
        SLUICE_RETURN_IF_ERROR(WriteText(dir + "/memory.swap.max", "0"));
      }
    }
    if (limits.cpus) {
      SLUICE_RETURN_IF_ERROR(
          WriteText(dir + "/cpu.max", std::to_string(*limits.cpus * 100000) + " 100000"));
    }
    if (limits.pids) {
      SLUICE_RETURN_IF_ERROR(WriteText(dir + "/pids.max", std::to_string(*limits.pids)));
    }
    if (!limits.cpuset.empty()) {  // empty files inherit the parent's
      SLUICE_RETURN_IF_ERROR(WriteText(dir + "/cpuset.cpus", FormatCpuList(limits.cpuset)));
      if (!limits.mems.empty()) {
        SLUICE_RETURN_IF_ERROR(WriteText(dir + "/cpuset.mems", FormatCpuList(limits.mems)));
      }
    }
    return Status::Ok();
  }

  std::string fs_root_;
  std::string path_;
  std::string dir_;  // <fs_root>/<path>
  bool binds_cpus_ = false;
};

// Enables the memory, cpu and pids controllers (and cpuset with `cpuset`) for the children of
// `dir`, as far as `dir` offers them (cgroup.controllers) and they are not enabled yet.
Status EnableControllers(const std::string& dir, bool cpuset) {
  std::optional<std::string> available = ReadText(dir + "/cgroup.controllers");
  if (!available) return Status::Ok();
  const std::string enabled = ReadText(dir + "/cgroup.subtree_control").value_or("");
  std::string request;
  for (const char* controller : {"memory", "cpu", "pids", "cpuset"}) {
    if (std::string_view(controller) == "cpuset" && !cpuset) continue;
    if (HasWord(*available, controller) && !HasWord(enabled, controller)) {
      request += std::string(request.empty() ? "+" : " +") + controller;
    }
  }
  if (request.empty()) return Status::Ok();
  return WriteText(dir + "/cgroup.subtree_control", request);
}

}  // namespace

Result<std::unique_ptr<Cgroups>> OpenV2(const CgroupOptions& options) {
  // 1. The agent's directories, each level delegating the controllers to the next.
  SLUICE_RETURN_IF_ERROR(EnableControllers(options.fs_root, options.cpuset));
  std::string dir = options.fs_root;
  std::istringstream parts(options.path);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty()) continue;
    SLUICE_RETURN_IF_ERROR(MakeDirs(dir, part));
    dir += "/" + part;
    SLUICE_RETURN_IF_ERROR(EnableControllers(dir, options.cpuset));
  }
  // 2. Stale job cgroups of a crashed predecessor.
  auto cgroups = std::make_unique<CgroupV2>(options.fs_root, options.path, options.cpuset);
  RemoveStaleJobs(*cgroups, {dir}, options.keep);
  return std::unique_ptr<Cgroups>(std::move(cgroups));
}

}  // namespace cgroup_internal

using namespace cgroup_internal;

std::string_view ToString(CgroupMode mode) {
  switch (mode) {
    case CgroupMode::kAuto:
      return "auto";
    case CgroupMode::kV2:
      return "v2";
    case CgroupMode::kV1:
      return "v1";
    case CgroupMode::kNone:
      return "none";
  }
  return "none";
}

Result<CgroupMode> ParseCgroupMode(std::string_view text) {
  for (CgroupMode mode : {CgroupMode::kAuto, CgroupMode::kV2, CgroupMode::kV1, CgroupMode::kNone}) {
    if (text == ToString(mode)) return mode;
  }
  return InvalidArgument("cgroup mode: expected auto, v2, v1 or none, got `" + std::string(text) +
                         "`");
}

std::string JobCgroupName(int64_t job) { return "job_" + std::to_string(job); }

Result<CgroupMode> DetectCgroupMode(const CgroupOptions& options) {
  const std::string& root = options.fs_root;
  switch (options.mode) {
    case CgroupMode::kNone:
      return CgroupMode::kNone;
    case CgroupMode::kV2:
      if (IsFile(root + "/cgroup.controllers")) return CgroupMode::kV2;
      return FailedPrecondition("cgroup v2: no " + root + "/cgroup.controllers");
    case CgroupMode::kV1:
      if (!V1Hierarchies(root, options.cpuset).empty()) return CgroupMode::kV1;
      return FailedPrecondition(
          "cgroup v1: no memory, cpu, cpuacct, pids or freezer hierarchy under " + root);
    case CgroupMode::kAuto:
      break;
  }
  struct statfs fs {};
  if (statfs(root.c_str(), &fs) == 0 && fs.f_type == kCgroup2Magic) return CgroupMode::kV2;
  struct statfs memory {};
  if (statfs((root + "/memory").c_str(), &memory) == 0 && memory.f_type == kCgroup1Magic) {
    return CgroupMode::kV1;
  }
  return CgroupMode::kNone;
}

Result<std::unique_ptr<Cgroups>> OpenCgroups(const CgroupOptions& options) {
  SLUICE_CHECK(!options.path.empty());
  Result<CgroupMode> mode = DetectCgroupMode(options);
  if (!mode) return mode.error();
  switch (*mode) {
    case CgroupMode::kV2:
      return OpenV2(options);
    case CgroupMode::kV1:
      return OpenV1(options);
    default:
      return std::unique_ptr<Cgroups>();
  }
}

std::string DefaultCgroupPath(const std::string& host, const std::string& state_dir) {
  return "sluice/" + AgentInstanceName(host, state_dir);
}

}  // namespace sluice::agent
