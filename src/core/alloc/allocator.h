// Allocator: finds where a job's whole request fits, all or nothing (R-AL-1).
//
// The cycle (and through it the admission policies and preemption) talks to this interface
// only. ResreqAllocator (resreq_allocator.h: plans and host iterators, R-AL-2 … R-AL-7) is
// the implementation; Scheduler takes another for tests. Implementations are stateless and
// const: everything a decision depends on is passed in. Thread-safety: const calls only.
#pragma once

#include <string>
#include <string_view>

#include "core/alloc/capacity.h"
#include "core/model/cluster_state.h"
#include "core/model/job.h"
#include "core/reasons/reason.h"

namespace sluice::core {

struct AllocOutcome {
  bool ok = false;
  Allocation allocation;   // when ok: hosts in host-index order
  PendingReasons reasons;  // when !ok: why it does not fit now
};

struct Feasibility {
  bool ok = true;
  std::string why;         // when !ok: what can never be met, in words a user can act on
  PendingReasons reasons;  // when !ok: the first alternative's shortfalls (R-UX-2's cause)
};

class Allocator {
 public:
  virtual ~Allocator() = default;

  // Nominate: computes an allocation for the job's whole request from `capacity`. It may
  // claim tentatively while it searches but returns with `capacity` exactly as it found it
  // (rollback is the allocator's duty, R-AL-1). Outcomes: ok with an allocation the caller
  // may Debit; or !ok with the reasons it does not fit now.
  // Preemption asks "would this fit if the candidate victims were gone" (R-AL-6) with the
  // same call on a Capacity that has the victims credited back (core/cycle/preemption.cc):
  // the answer depends only on `capacity`, so there is no separate mode.
  virtual AllocOutcome Nominate(const Job& job, const ClusterState& state,
                                Capacity& capacity) const = 0;
  // Nominate for a caller that never reads a failure's reasons (a cycle that explains nothing
  // and has no named limits): the same verdict and the same allocation, but a failure's
  // reasons may be left empty, which spares the host scans that only count them (R-UX-8's
  // forecast, the simulator). Default: Nominate.
  virtual AllocOutcome NominateUnexplained(const Job& job, const ClusterState& state,
                                           Capacity& capacity) const {
    return Nominate(job, state, capacity);
  }

  // Static feasibility (R-ADM-1): could the request ever be met by the configured hosts,
  // counting hosts in every state as capacity? `all_configured` is
  // Capacity::AllConfigured(state), built once by the caller; it is returned unchanged.
  // !ok means the job is UNSCHEDULABLE.
  virtual Feasibility CheckFeasible(const Job& job, const ClusterState& state,
                                    Capacity& all_configured) const = 0;
};

}  // namespace sluice::core
