#include "agent/job_script.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "agent/account.h"
#include "wire/host_slots.h"

namespace sluice::agent {
namespace {

Status Failed(const std::string& what, const std::string& path, int error) {
  return Status(StatusCode::kFailedPrecondition,
                "job script: " + what + ": " + path + ": " + std::strerror(error));
}

std::string DefaultDir(const std::string& instance) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp";
  return base + "/sluice-scripts-" + std::to_string(geteuid()) + "-" + instance;
}

}  // namespace

ScriptFiles::ScriptFiles(std::string dir, const std::string& instance)
    : dir_(dir.empty() ? DefaultDir(instance) : std::move(dir)) {}

std::string ScriptFiles::PathOf(int64_t job) const { return dir_ + "/job-" + std::to_string(job); }

Status ScriptFiles::EnsureDirectory() {
  if (mkdir(dir_.c_str(), 0711) != 0 && errno != EEXIST) return Failed("mkdir", dir_, errno);
  struct stat st {};
  if (lstat(dir_.c_str(), &st) != 0) return Failed("lstat", dir_, errno);
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
    return Failed("not a directory owned by the agent", dir_, EPERM);
  }
  if ((st.st_mode & 07777) != 0711 && chmod(dir_.c_str(), 0711) != 0) {
    return Failed("chmod", dir_, errno);
  }
  return Status::Ok();
}

Status ScriptFiles::Prepare(const wire::Launch& launch, JobSpec& spec) {
  SLUICE_RETURN_IF_ERROR(EnsureDirectory());
  const std::string path = PathOf(launch.job);
  (void)unlink(path.c_str());  // a leftover of an earlier launch of the same job
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
  if (fd < 0) return Failed("create", path, errno);
  size_t written = 0;
  const std::string& text = launch.script;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(fd);
      unlink(path.c_str());
      return Failed("write", path, error);
    }
    written += static_cast<size_t>(n);
  }
  const std::string& owner = launch.account.empty() ? launch.user : launch.account;
  if (geteuid() == 0 && !owner.empty()) {
    // Readable by the account the job runs as (R-SEC-1), not only by the agent.
    if (Result<Account> account = LookupAccount(owner, ""); account.has_value()) {
      if (fchown(fd, account->uid, account->gid) != 0) {
        const int error = errno;
        close(fd);
        unlink(path.c_str());
        return Failed("chown", path, error);
      }
    }
  }
  close(fd);
  std::vector<std::string> argv;
  if (!text.starts_with("#!")) argv.push_back("/bin/sh");
  argv.push_back(path);
  for (size_t i = 1; i < launch.argv.size(); ++i) argv.push_back(launch.argv[i]);
  spec.argv = std::move(argv);
  spec.command.clear();
  return Status::Ok();
}

Status ScriptFiles::PrepareHostfile(JobSpec& spec) {
  auto hosts = spec.env.find("SLUICE_HOSTS");
  if (hosts == spec.env.end() || hosts->second.empty()) return Status::Ok();
  // "h1:2,h2:2" -> one line per slot, in allocation order (what mpirun's --hostfile reads).
  std::string text;
  for (const auto& [name, slots] : wire::ParseHostSlots(hosts->second)) {
    for (int k = 0; k < std::min(slots, 100'000); ++k) text += name + "\n";
  }
  SLUICE_RETURN_IF_ERROR(EnsureDirectory());
  const std::string path = PathOf(spec.job) + ".hosts";
  (void)unlink(path.c_str());
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0) return Failed("create", path, errno);
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int error = errno;
  close(fd);
  if (!written) {
    unlink(path.c_str());
    return Failed("write", path, error);
  }
  spec.env["SLUICE_HOSTFILE"] = path;
  spec.env["LSB_DJOB_HOSTFILE"] = path;
  return Status::Ok();
}

void ScriptFiles::Remove(int64_t job) {
  (void)unlink(PathOf(job).c_str());
  (void)unlink((PathOf(job) + ".hosts").c_str());
}

}  // namespace sluice::agent
