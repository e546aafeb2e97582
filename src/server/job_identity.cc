#include "server/job_identity.h"

#include <pwd.h>

#include <vector>

namespace sluice::server {
namespace {

// Whether the controller's host resolves `account` to uid 0 (unknown accounts: no).
bool HasUidZero(const std::string& account) {
  if (account == "root") return true;
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwnam_r(account.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0) return false;
  return found != nullptr && found->pw_uid == 0;
}

}  // namespace

Result<Caller> WithJobAccount(const config::AuthConfig& auth, Caller caller) {
  caller.account = caller.user;
  for (const config::AuthUser& user : auth.users) {
    if (user.name == caller.user && !user.unix_user.empty()) caller.account = user.unix_user;
  }
  if (!auth.allow_root_jobs && HasUidZero(caller.account)) {
    return InvalidArgument("job: user " + caller.user + " runs jobs as account `" + caller.account +
                           "` (uid 0), and jobs of uid 0 are refused: map the user to another "
                           "account (auth.users[].unix_user) or set auth.allow_root_jobs: true");
  }
  return caller;
}

std::string AccountOf(const nlohmann::json& spec) {
  auto account = spec.find("account");
  if (account != spec.end() && account->is_string() && !account->get<std::string>().empty()) {
    return account->get<std::string>();
  }
  return spec.value("user", "");
}

LaunchLimits LaunchLimitsOf(const JobInfo& job, const core::ClusterState& state) {
  LaunchLimits limits;
  if (job.hosts.empty()) return limits;
  limits.cpus = job.hosts.front().second;
  const core::Job* cj = job.in_core ? state.FindJob(job.row.id) : nullptr;
  const std::optional<HostIndex> host = state.FindHost(job.hosts.front().first);
  const std::optional<ResourceId> mem = state.FindHostResource("mem");
  if (cj == nullptr || !host || !mem) return limits;
  for (const core::HostGrant& grant : cj->allocation.hosts) {
    if (grant.host != *host) continue;
    for (const core::ResourceAmount& amount : grant.resources) {
      if (amount.id == *mem && amount.amount > 0) limits.mem_limit_mb = amount.amount;
    }
  }
  return limits;
}

}  // namespace sluice::server
