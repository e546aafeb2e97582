#include "agent/job_tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "agent/account.h"

namespace sluice::agent {
namespace {

constexpr const char* kSuffix = ".tmpdir";

Status Failed(const std::string& what, const std::string& path, int error) {
  return Status(StatusCode::kFailedPrecondition,
                "job tmpdir " + path + ": " + what + ": " + std::strerror(error));
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  (void)remove(path);  // best effort: whatever stays is swept at the next start
  return 0;
}

// The job id of a directory entry named JOB.tmpdir; 0 for anything else.
int64_t JobOfEntry(const std::string& name) {
  if (!name.ends_with(kSuffix)) return 0;
  const std::string digits = name.substr(0, name.size() - std::strlen(kSuffix));
  if (digits.empty() || digits.size() > 18 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  return std::stoll(digits);
}

}  // namespace

JobTmpDirs::JobTmpDirs(std::string base) : base_(std::move(base)) {
  while (base_.size() > 1 && base_.ends_with('/')) base_.pop_back();
}

JobTmpDirs::~JobTmpDirs() { Reap(true); }

std::string JobTmpDirs::PathOf(int64_t job) const {
  return base_ + "/" + std::to_string(job) + kSuffix;
}

Status JobTmpDirs::EnsureBase() const {
  if (!enabled()) return Status::Ok();
  if (mkdir(base_.c_str(), 0711) != 0 && errno != EEXIST) return Failed("mkdir", base_, errno);
  struct stat st {};
  if (lstat(base_.c_str(), &st) != 0) return Failed("lstat", base_, errno);
  if (!S_ISDIR(st.st_mode)) return Failed("not a directory", base_, ENOTDIR);
  return Status::Ok();
}

Result<std::string> JobTmpDirs::Prepare(int64_t job, const std::string& account) const {
  SLUICE_RETURN_IF_ERROR(EnsureBase());
  const std::string path = PathOf(job);
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (uid == 0) {
    Result<Account> owner = LookupAccount(account, "");
    if (!owner) return owner.error();
    uid = owner->uid;
    gid = owner->gid;
  }
  const bool made = mkdir(path.c_str(), 0700) == 0;
  if (!made && errno != EEXIST) return Failed("mkdir", path, errno);
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return Failed("lstat", path, errno);
  if (made && st.st_uid != uid) {
    // lchown: the entry just made, never what a link would point to.
    if (lchown(path.c_str(), uid, gid) != 0) return Failed("chown", path, errno);
    st.st_uid = uid;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid) {
    return Failed("exists and is not a directory of the job's account", path, EEXIST);
  }
  return path;
}

void JobTmpDirs::Remove(int64_t job) {
  if (!enabled()) return;
  const std::string path = PathOf(job);
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  const pid_t pid = fork();
  if (pid < 0) return;  // left for the next start's sweep
  if (pid == 0) {
    // The owner empties it; the agent removes the emptied directory (BASE may not be
    // writable by the owner).
    if (geteuid() == 0 && st.st_uid != 0 &&
        (setgroups(0, nullptr) != 0 || setgid(st.st_gid) != 0 || setuid(st.st_uid) != 0)) {
      _exit(1);
    }
    // Depth first, links removed as links, the job's own mounts left alone.
    (void)nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    _exit(0);
  }
  removers_.emplace_back(pid, path);
}

void JobTmpDirs::Reap(bool wait) {
  std::erase_if(removers_, [wait](const std::pair<pid_t, std::string>& remover) {
    int status = 0;
    pid_t got;
    while ((got = waitpid(remover.first, &status, wait ? 0 : WNOHANG)) < 0 && errno == EINTR) {
    }
    if (got == 0) return false;
    (void)rmdir(remover.second.c_str());  // a link is not followed; a non-empty one stays
    return true;
  });
}

void JobTmpDirs::RemoveStale(const std::function<bool(int64_t)>& running) {
  if (!enabled()) return;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(base_.c_str()), closedir);
  if (!dir) return;
  std::vector<int64_t> stale;
  while (const dirent* entry = readdir(dir.get())) {
    const int64_t job = JobOfEntry(entry->d_name);
    if (job > 0 && !running(job)) stale.push_back(job);
  }
  for (int64_t job : stale) Remove(job);
}

}  // namespace sluice::agent
