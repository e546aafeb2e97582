#include "base/mutex.h"
#include "server/job_identity.h"

#include <pwd.h>

#include <chrono>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace sluice::server {
namespace {

// Whether the controller's host resolves `account` to uid 0 (unknown accounts: no).
bool LooksUpUidZero(const std::string& account) {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwnam_r(account.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0) return false;
  return found != nullptr && found->pw_uid == 0;
}

// getpwnam_r reads the account database (/etc/passwd, or NSS) at every call: ~0.1 ms, once per
// submission and under the controller's lock (8 % of the server's CPU in a loop of single
// submissions, issue 21). Its answer is kept for kUidAnswerTtl: an account made uid 0 since is
// refused from then on, and the agents refuse to launch as uid 0 anyway (R-SEC-1).
constexpr auto kUidAnswerTtl = std::chrono::seconds(30);
constexpr size_t kUidAnswersKept = 10'000;

bool HasUidZero(const std::string& account) {
  if (account == "root") return true;
  struct Answer {
    bool uid_zero;
    std::chrono::steady_clock::time_point until;
  };
  static Mutex mu{LockRank::kIdentityCache};
  static std::unordered_map<std::string, Answer> answers;
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu);
    auto it = answers.find(account);
    if (it != answers.end() && now < it->second.until) return it->second.uid_zero;
  }
  const bool uid_zero = LooksUpUidZero(account);  // without the lock: it may read a file
  std::lock_guard lock(mu);
  if (answers.size() >= kUidAnswersKept) answers.clear();
  answers[account] = Answer{uid_zero, now + kUidAnswerTtl};
  return uid_zero;
}

}  // namespace

bool IsKnownUser(const config::AuthConfig& auth, const std::string& user) {
  for (const config::AuthUser& u : auth.users) {
    if (u.name == user) return true;
  }
  for (const std::string& admin : auth.admins) {
    if (admin == user) return true;
  }
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  return getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found) == 0 &&
         found != nullptr;
}

std::string ConfiguredUserNames(const config::AuthConfig& auth) {
  std::string names;
  for (size_t i = 0; i < auth.users.size() && i < 20; ++i) {
    names += (names.empty() ? "" : ", ") + auth.users[i].name;
  }
  if (auth.users.size() > 20) names += ", ...";
  return names;
}

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

Status RefuseUnlessOwner(const Caller& caller, const std::string& owner, JobId id,
                         std::string_view what) {
  if (caller.admin || owner == caller.user) return Status::Ok();
  return Status(StatusCode::kPermissionDenied, "job " + std::to_string(id) + " belongs to " +
                                                   owner + "; " + caller.user + " may " +
                                                   std::string(what));
}

LaunchLimits LaunchLimitsOf(const JobInfo& job, const core::ClusterState& state, size_t index) {
  LaunchLimits limits;
  if (index >= job.launch().hosts.size()) return limits;
  limits.cpus = job.launch().hosts[index].second;
  const core::Job* cj = job.in_core ? state.FindJob(job.row.id) : nullptr;
  const std::optional<HostIndex> host = state.topology().FindHost(job.launch().hosts[index].first);
  const std::optional<ResourceId> mem = state.topology().FindHostResource("mem");
  if (cj == nullptr || !host) return limits;
  for (const core::HostGrant& grant : cj->allocation.hosts) {
    if (grant.host != *host) continue;
    for (const core::ResourceAmount& amount : grant.resources) {
      if (mem && amount.id == *mem && amount.amount > 0) limits.mem_limit_mb = amount.amount;
    }
    limits.gpus = grant.gpus;
    limits.gpu_mem_mb = grant.gpu_mem_mb;
  }
  const core::Host& h = state.topology().hosts()[*host];
  for (uint64_t rest = h.devices.all; rest != 0; rest &= rest - 1) {
    const int32_t i = __builtin_ctzll(rest);
    limits.gpu_paths[i] = "/dev/nvidia" + std::to_string(i);  // NVIDIA's naming by default
  }
  for (const core::GpuDevice& gpu : h.spec.gpus) {
    if (!gpu.path.empty() && limits.gpu_paths.contains(gpu.index)) {
      limits.gpu_paths[gpu.index] = gpu.path;
    }
  }
  return limits;
}

wire::GpuBinding GpuBindingOf(const LaunchLimits& limits) {
  wire::GpuBinding binding{.gpu_paths = limits.gpu_paths, .mem_mb = limits.gpu_mem_mb};
  for (uint64_t rest = limits.gpus; rest != 0; rest &= rest - 1) {
    binding.gpus.push_back(__builtin_ctzll(rest));
  }
  return binding;
}

}  // namespace sluice::server
