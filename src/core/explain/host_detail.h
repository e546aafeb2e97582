// Per-host detail of a pending job (`bjobs -p2` style): what each host of its queue says
// about it, grouped by what they say.
//
// The allocator keeps counts per reason, not host lists (lists would cost memory on every
// evaluation of every cycle). This detail is derived on request from the state as the last
// committed cycle left it, with the same predicates as the allocator, in its order: select[]
// (any part of any alternative), host state, exclusive use, free slots, free host resources
// per task of the first matching part. Hosts withheld for a gated head within a cycle are not
// visible in the state and show as they are. Pure; O(hosts x parts).
// Implements the per-host part of R-PR-2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/cluster_state.h"
#include "core/reasons/reason.h"

namespace sluice::core {

struct HostVerdict {
  HostIndex host = 0;
  bool room = false;                          // the host could take some of the job's tasks now
  ReasonCode code = ReasonCode::kNoResource;  // when !room
  std::string resource;                       // kNoResource: "slots" or a host resource
  int64_t needed = 0;                         // kNoResource: per task (resources) or 1 (slots)
  int64_t available = 0;  // kNoResource: free on the host; room: tasks it could take
  std::string per = "task";  // kNoResource: what `needed` is for ("task", or "host" for GPUs)
  std::string devices;       // kNoResource on gpu: the devices' constraints (R-GPU-4)
};

// One verdict per host of the job's queue, in host order.
std::vector<HostVerdict> ExplainHosts(const Job& job, const ClusterState& state);

// "Not enough job slots (0 free)", "Not enough mem (needs 2000 per task, 500 free)",
// "Host is closed or draining", "Has room for 3 tasks".
std::string RenderHostVerdict(const HostVerdict& verdict);

// One line per distinct verdict text, hosts listed in host order (at most `max_names` names
// per line, then "and N more"): "  h001, h002: Not enough job slots (0 free)\n".
std::string RenderHostDetail(const std::vector<HostVerdict>& verdicts, const ClusterState& state,
                             size_t max_names = 32);

}  // namespace sluice::core
