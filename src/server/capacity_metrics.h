// The /metrics capacity series (issue 47.10): per host (slots, running jobs, consumable
// resources, status) and per user (jobs by state, slots held). A scrape copies them as plain
// values under the controller's lock (CollectCapacity) and writes them after releasing it
// (WriteCapacity): with 10,000 hosts the lock is held for the copy, not for the ~100,000
// samples' formatting.
// Thread-safety: CollectCapacity REQUIRES the context's mutex held; the rest is pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/model/cluster_state.h"
#include "server/job_book.h"
#include "server/metrics.h"

namespace sluice::server {

struct HostCapacity {
  std::string name;
  int32_t slots = 0;
  int32_t used_slots = 0;
  int32_t running_jobs = 0;
  core::HostState state = core::HostState::kOk;
  std::vector<int64_t> resource_total;  // by host ResourceId
  std::vector<int64_t> resource_used;
  int32_t gpus = 0;       // its devices (R-GPU-4)
  int32_t gpus_used = 0;  // held by jobs
  // By model ("" when not declared): its devices and those held.
  std::map<std::string, std::pair<int32_t, int32_t>> gpus_by_model;
};

struct CapacitySnapshot {
  std::vector<std::string> resources;  // host resource names, by ResourceId
  std::vector<HostCapacity> hosts;     // in host order
  std::map<std::pair<std::string, std::string>, int64_t> user_jobs;  // (user, state), not ended
  std::map<std::string, int64_t> user_slots;                         // held by running jobs
};

CapacitySnapshot CollectCapacity(const core::ClusterState& state, const JobCounts& counts,
                                 std::map<std::string, int64_t> user_slots);
void WriteCapacity(const CapacitySnapshot& capacity, PromWriter& w);

}  // namespace sluice::server
