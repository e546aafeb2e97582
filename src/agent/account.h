// Account: a UNIX account as a job runs under it (R-SEC-1): uid, primary gid, supplementary
// groups (what initgroups would set) and the HOME, SHELL of its passwd entry.
//
// `LookupAccount` uses getpwnam_r and getgrouplist, which may allocate and talk to NSS: call
// it before fork, never in the child. The child only calls setgroups/setgid/setuid with the
// values held here. Thread-safety: value type; LookupAccount is reentrant.
// Implements the account resolution of R-SEC-1.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace sluice::agent {

struct Account {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, including gid
  std::string home;
  std::string shell;
};

// kNotFound "unknown account `<name>` on host <host>" when there is no such account; kInternal
// when the lookup itself fails (NSS error).
Result<Account> LookupAccount(const std::string& name, const std::string& host);
// The account of a uid (for an agent that runs as a non-root account), same errors.
Result<Account> LookupAccountByUid(uid_t uid, const std::string& host);

}  // namespace sluice::agent
