// ResreqAllocator: places a job's whole resource request — alternatives of compounds of
// primaries — atomically on the cluster (R-AL-1 … R-AL-7, R-RR-2, R-RR-3, R-RR-6).
//
// Composition (seeds/001 "Composition Algorithm", with its corrections):
//  - Request: alternatives in order; the first that fully fits wins (R-RR-3). When all
//    fail, the reasons of every alternative are merged.
//  - Compound: every part, in order, against the capacity left by the earlier parts; a part
//    that fails rolls back the whole compound (R-RR-2).
//  - Primary: task counts from max down to min (R-RR-6); for each, the hosts of the queue's
//    group that pass select[] and have room, grouped by same[attr] value (groups in value
//    order); in each group the PlanIterator's plans, and for each plan its buckets, largest
//    first, each from a fresh host iterator over the hosts in order[] order (default: host
//    order) that skips hosts claimed earlier in the plan. A host rejected for a larger
//    bucket stays eligible for a smaller one. A plan that fails rolls back its claims.
//  - A host's demand for a bucket of b tasks is b x the per-task host rusage; shared rusage
//    is per job, checked once per primary (R-AL-4). Exclusive jobs take whole idle hosts.
// The allocator is stateless; it claims tentatively in the Capacity and always returns it
// unchanged (R-AL-1). docs/resreq.md describes requests for users.
#pragma once

#include "core/alloc/allocator.h"

namespace sluice::core {

class ResreqAllocator final : public Allocator {
 public:
  // `reference`: the straightforward path, without the fast paths and lookup caches (the
  // differential test compares the two; PrimaryTask::reference).
  explicit ResreqAllocator(bool reference = false) : reference_(reference) {}

  AllocOutcome Nominate(const Job& job, const ClusterState& state,
                        Capacity& capacity) const override;
  AllocOutcome NominateUnexplained(const Job& job, const ClusterState& state,
                                   Capacity& capacity) const override;
  Feasibility CheckFeasible(const Job& job, const ClusterState& state,
                            Capacity& all_configured) const override;

 private:
  AllocOutcome NominateFor(const Job& job, const ClusterState& state, Capacity& capacity,
                           bool explain_failure) const;

  bool reference_ = false;
};

}  // namespace sluice::core
