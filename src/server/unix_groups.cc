#include "server/unix_groups.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace sluice::server {

std::vector<std::string> UnixGroupsOf(const std::string& account) {
  std::vector<char> buffer(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwnam_r(account.c_str(), &pw, buffer.data(), buffer.size(), &found) != 0 ||
      found == nullptr) {
    return {};
  }
  const gid_t primary = pw.pw_gid;
  std::vector<gid_t> gids(64);
  int count = static_cast<int>(gids.size());
  if (getgrouplist(account.c_str(), primary, gids.data(), &count) < 0) {
    gids.resize(static_cast<size_t>(count));  // count now says how many there are
    if (getgrouplist(account.c_str(), primary, gids.data(), &count) < 0) count = 0;
  }
  gids.resize(static_cast<size_t>(count));
  std::vector<std::string> names;
  for (gid_t gid : gids) {
    group gr{};
    group* g = nullptr;
    if (getgrgid_r(gid, &gr, buffer.data(), buffer.size(), &g) == 0 && g != nullptr) {
      names.emplace_back(g->gr_name);
    }
  }
  return names;
}

}  // namespace sluice::server
