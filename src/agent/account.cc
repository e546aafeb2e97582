#include "agent/account.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cstring>

namespace sluice::agent {
namespace {

// The supplementary groups of `name` with primary group `gid`, as initgroups would set them.
Result<std::vector<gid_t>> GroupsOf(const std::string& name, gid_t gid) {
  int count = 32;
  std::vector<gid_t> groups;
  for (int attempt = 0; attempt < 8; ++attempt) {
    groups.resize(static_cast<size_t>(count));
    int got = count;
    if (getgrouplist(name.c_str(), gid, groups.data(), &got) >= 0) {
      groups.resize(static_cast<size_t>(got));
      return groups;
    }
    count = got > count ? got : count * 2;  // -1: `got` holds the number needed
  }
  return Internal("getgrouplist " + name + ": too many groups");
}

Result<Account> FromPasswd(const passwd& pw, const std::string& host) {
  Account account{
      .name = pw.pw_name,
      .uid = pw.pw_uid,
      .gid = pw.pw_gid,
      .home = pw.pw_dir != nullptr ? pw.pw_dir : "/",
      .shell = pw.pw_shell != nullptr && *pw.pw_shell != '\0' ? pw.pw_shell : "/bin/sh"};
  Result<std::vector<gid_t>> groups = GroupsOf(account.name, account.gid);
  if (!groups) return groups.error().WithPrefix("host " + host);
  account.groups = std::move(*groups);
  return account;
}

// Calls `lookup(buffer, size, &result)` (a getpw*_r), growing the buffer on ERANGE.
template <typename Lookup>
Result<Account> Resolve(Lookup lookup, const std::string& what, const std::string& host) {
  long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(hint > 0 ? static_cast<size_t>(hint) : 4096);
  passwd pw{};
  passwd* found = nullptr;
  int error = 0;
  while ((error = lookup(&pw, buffer.data(), buffer.size(), &found)) == ERANGE &&
         buffer.size() < (1u << 20)) {
    buffer.resize(buffer.size() * 2);
  }
  if (found != nullptr) return FromPasswd(pw, host);
  if (error == 0 || error == ENOENT || error == ESRCH || error == EBADF || error == EPERM) {
    return NotFound("unknown account " + what + " on host " + host);
  }
  return Internal("looking up account " + what + " on host " + host + ": " + std::strerror(error));
}

}  // namespace

Result<Account> LookupAccount(const std::string& name, const std::string& host) {
  return Resolve([&](passwd* pw, char* buffer, size_t size,
                     passwd** found) { return getpwnam_r(name.c_str(), pw, buffer, size, found); },
                 "`" + name + "`", host);
}

Result<Account> LookupAccountByUid(uid_t uid, const std::string& host) {
  return Resolve([&](passwd* pw, char* buffer, size_t size,
                     passwd** found) { return getpwuid_r(uid, pw, buffer, size, found); },
                 "of uid " + std::to_string(uid), host);
}

}  // namespace sluice::agent
