// Who a job runs as and how it is contained, as the controller decides it (R-SEC-1, R-SEC-3):
//  - the UNIX account of a submission: the submitting user's `unix_user:` in the cluster
//    YAML's auth section, else the user's name (a MUNGE user's name is its account already);
//  - uid 0 is refused at submission unless `auth.allow_root_jobs: true`: an account named
//    `root`, or one the controller's host resolves to uid 0 (an account the controller's host
//    does not know is left to the agents, which fail its launch naming account and host);
//  - the limits a launch carries to its agent: memory = the job's `mem` grant on its launch
//    host (rusage[mem=M] x its tasks there, when it asks for mem), CPUs = its slots there.
// Thread-safety: pure functions of their arguments, except that WithJobAccount reads the
// host's account database (getpwnam_r, reentrant) and keeps each account's answer for 30 s
// (behind its own mutex).
// Implements the controller's part of R-SEC-1 and R-SEC-3.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "config/cluster_yaml.h"
#include "core/model/cluster_state.h"
#include "server/context.h"
#include "server/job_book.h"
#include "wire/gpu_indexes.h"

namespace sluice::server {

// `caller` with `account` set to the account its jobs run as. Errors: kInvalidArgument
// "job: user U runs jobs as account `root` (uid 0): ..." naming how to change it.
Result<Caller> WithJobAccount(const config::AuthConfig& auth, Caller caller);

// Whether `user` may be anyone's name here: a user of `auth.users` or `auth.admins`, or an
// account the controller's host knows (a MUNGE user's name). Reads the account database.
bool IsKnownUser(const config::AuthConfig& auth, const std::string& user);
// "alice, bob, ..." (at most 20): the users `auth.users` names, for messages.
std::string ConfiguredUserNames(const config::AuthConfig& auth);

// R-SRV-5: users act on their own jobs only, administrators on every job. kPermissionDenied
// "job ID belongs to OWNER; USER may WHAT" otherwise (`what`: "act only on their own jobs",
// "peek only at their own jobs", ...).
Status RefuseUnlessOwner(const Caller& caller, const std::string& owner, JobId id,
                         std::string_view what = "act only on their own jobs");

// The account a stored spec runs as: its `account`, or (a row stored before R-SEC-1) its user.
std::string AccountOf(const nlohmann::json& spec);

struct LaunchLimits {
  std::optional<int64_t> mem_limit_mb;
  std::optional<int> cpus;
  // Its GPUs there (R-GPU-3) and the device node of each of the host's GPUs by index (the
  // agent fences off the rest); empty on a host without GPUs.
  uint64_t gpus = 0;
  std::map<int32_t, std::string> gpu_paths;
  int64_t gpu_mem_mb = 0;  // shared mode: device memory reserved on each of `gpus`
};
// The limits of `job`'s processes on host `index` of its allocation (0: its launch host, where
// the job itself runs; others: where its steps run); none for a job the core no longer holds.
LaunchLimits LaunchLimitsOf(const JobInfo& job, const core::ClusterState& state,
                            size_t index = 0);
// The GPUs of `limits` as a launch or a step order carries them.
wire::GpuBinding GpuBindingOf(const LaunchLimits& limits);

}  // namespace sluice::server
