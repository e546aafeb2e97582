// The UNIX groups of an account as the controller's host resolves them (NSS: getpwnam_r,
// getgrouplist, getgrgid_r), for the `groups` of advance reservations (issue 42): a job may run
// in a reservation when its account is a member of one of them.
// Thread-safety: reentrant; reads the account database on every call.
#pragma once

#include <string>
#include <vector>

namespace sluice::server {

// The names of `account`'s groups (its primary group first); empty when the host does not
// know the account.
std::vector<std::string> UnixGroupsOf(const std::string& account);

}  // namespace sluice::server
