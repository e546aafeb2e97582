// CycleLimits: named limits (R-Q-2) as one scheduling cycle applies them.
//
// Usage is the state's (jobs running) plus this cycle's starts (an overlay charged by
// CycleContext::Start), so a limit binds within the cycle as it will after commit.
//  - Limits without a host scope are checked before a job is tried: a job that would exceed
//    one is skipped with LIMIT (the limit's name, consumer, used/max) and is never a head
//    (R-ADM-2: limits skip, they do not block the queue).
//  - Host-scoped limits shape where a job may go: before nominating, MaskHosts claims, on a
//    tentative Capacity mark, whatever the job may not use on the limit's hosts (the whole
//    host when a per-host job or slot maximum is reached, the excess otherwise); the caller
//    rolls the mark back after the nomination. A limit over hosts together is checked on the
//    nominated allocation (FitsHostGroups); when it is exceeded the nomination is retried
//    with those hosts masked entirely.
// Cost: O(limits) per job for the checks, plus O(hosts used by the consumer) per host-scoped
// limit; nothing when no limit is configured.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/alloc/capacity.h"
#include "core/model/cluster_state.h"
#include "core/model/limit_usage.h"
#include "core/reasons/reason.h"

namespace sluice::core {

class CycleLimits {
 public:
  explicit CycleLimits(const ClusterState& state) : state_(state) {}

  bool any() const { return !state_.usage().limits().limits().empty(); }

  // The reasons a limit without host scope keeps `job` from starting now, or nullopt.
  std::optional<PendingReasons> Blocked(const Job& job) const;

  // Claims on `capacity` what host-scoped limits keep `job` from using; returns one
  // HOST_LIMIT detail per limit that restricted some host (empty: nothing masked).
  // `whole_groups` masks the hosts of limits over hosts together entirely.
  std::vector<ReasonDetail> MaskHosts(const Job& job, Capacity& capacity, bool whole_groups) const;
  // False when the allocation puts more on the hosts of a limit over hosts together than it
  // has room for.
  bool FitsHostGroups(const Job& job, const Allocation& allocation) const;

  // Charges a job started in this cycle.
  void Charge(const Job& job, const Allocation& allocation);

 private:
  LimitAmounts UsedNow(size_t index, const LimitConsumer& consumer) const;
  // MaskHosts for one limit counted per host, and for one over its hosts together.
  void MaskPerHost(size_t index, const Job& job, Capacity& capacity, ReasonDetail& detail) const;
  void MaskHostGroup(size_t index, const Job& job, Capacity& capacity, bool whole_groups,
                     ReasonDetail& detail) const;
  const std::string& QueueName(const Job& job) const {
    return state_.topology().queues()[job.queue].spec.name;
  }

  const ClusterState& state_;
  std::optional<LimitUsage> overlay_;  // configured on the first charge
};

// "user alice, queue normal" — the consumer a limit detail speaks about.
std::string DescribeConsumer(const LimitConsumer& consumer, const std::vector<Host>& hosts);

}  // namespace sluice::core
