// AllocatePrimary: one primary request's plan and host search (see resreq_allocator.h).
//
// Internal to core/alloc. Claims the chosen hosts (and the primary's shared resources) in
// the Capacity and appends their grants; on failure it leaves the Capacity as it found it
// and appends the reasons.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "core/alloc/capacity.h"
#include "core/alloc/free_amount_select.h"
#include "core/alloc/host_view.h"
#include "core/model/cluster_state.h"
#include "core/reasons/reason.h"
#include "core/resreq/eval.h"
#include "core/resreq/request.h"

namespace sluice::core {

struct PrimaryTask {
  const ClusterState& state;
  const Queue& queue;
  const resreq::Primary& primary;
  int32_t min_tasks = 1;
  int32_t max_tasks = 1;
  bool exclusive = false;
  // Static feasibility (R-ADM-1): a select[] that tests a free amount (`slots==1`,
  // `mem>4000`) may hold on a host at some moment, so it passes every host; only the
  // configuration makes a job impossible. (With such a select beside attribute tests, e.g.
  // `type==sparc && slots<3`, an impossible job stays pending rather than failing.)
  bool optimistic_select = false;
  // The straightforward path (tests/property/differential_test.cc): no one-host fast path,
  // no memoized verdicts (every select evaluated on every host), plain map lookups in the
  // host view, the plain sort of order[].
  bool reference = false;
  // Whether a failure needs its reasons (ExplainFailure's host counts). Without them the
  // host scan visits only hosts with room and a failure leaves `reasons` as it was; the
  // placement found, or that none exists, is the same (Allocator::NominateUnexplained).
  bool explain_failure = true;
  // Advance reservations (R-RSV-2): which hosts the job may use for how long it runs.
  ReservationTerms reservation;

  bool Selects(HostIndex host, const resreq::HostView& view) const {
    if (optimistic_select && state.requests().SelectTestsFreeAmounts(primary.select)) return true;
    // The reference path evaluates afresh, so the differential test checks the memo too.
    if (reference) return resreq::EvalSelect(primary.select, state.requests().expr_pool(), view);
    return state.requests().PassesSelect(primary.select, host, view);
  }
};

// task.Selects for a host scan: a memoized verdict is read directly (one byte per host, no
// lookup); hosts not judged yet are evaluated through the view (and memoized), and hosts
// where the select reads free amounts are evaluated every time: from the capacity's free
// columns when the select compares free amounts with constants (FreeAmountSelect), else
// through the view.
class HostSelector {
 public:
  HostSelector(const PrimaryTask& task, const Capacity& capacity)
      : task_(task),
        capacity_(capacity),
        all_(task.primary.select == resreq::kNoExpr ||
             (task.optimistic_select &&
              task.state.requests().SelectTestsFreeAmounts(task.primary.select))),
        verdicts_(all_ ? nullptr : task.state.requests().SelectVerdicts(task.primary.select)) {
    if (!all_ && !task.reference && !task.state.requests().SelectIsStatic(task.primary.select)) {
      compiled_ = FreeAmountSelect::Compile(task.primary.select, task.state.requests().expr_pool(),
                                            task.state);
    }
  }

  // Whether the host's memoized verdict is a static failure: a scan tests this before the
  // host's free amounts, which cost more to read than the verdict's byte.
  bool KnownToFail(HostIndex host) const {
    return verdicts_ != nullptr && !task_.reference &&
           verdicts_[host] == RequestCatalog::kSelectFails;
  }

  // Inline for the memoized verdicts a scan mostly reads; the rest is out of line.
  bool Passes(HostIndex host, CapacityHostView& view) const {
    if (!task_.reference) {
      if (all_) return true;
      const uint8_t verdict = verdicts_[host];
      if (verdict == RequestCatalog::kSelectPasses) return true;
      if (verdict == RequestCatalog::kSelectFails) return false;
    }
    return Evaluate(host, view);
  }

 private:
  // Passes for the reference path, and for hosts not judged yet or whose verdict reads free
  // amounts.
  bool Evaluate(HostIndex host, CapacityHostView& view) const;

  const PrimaryTask& task_;
  const Capacity& capacity_;
  bool all_;
  const uint8_t* verdicts_;  // non-null unless all_
  std::optional<FreeAmountSelect> compiled_;  // for hosts marked kSelectReadsFree
};

// What the primaries of one attempt have claimed so far.
struct Placement {
  std::vector<HostGrant> grants;
  std::vector<ResourceAmount> shared;
};

bool AllocatePrimary(const PrimaryTask& task, Capacity& capacity, Placement& placement,
                     PendingReasons& reasons);

// Every placement of the primary in the allocator's order of preference — each plan, and
// each assignment of its buckets to distinct hosts that can take them — claimed in turn and
// handed to `next`, which returns true to keep it (then this returns true with the claims
// in place) or false to have it rolled back and the next one tried. Each host tried costs
// one unit of `budget`; at zero the enumeration stops and returns false. The first
// placement offered is the one AllocatePrimary takes. Used to search compound requests.
bool EnumeratePlacements(const PrimaryTask& task, Capacity& capacity, Placement& placement,
                         int64_t& budget, const std::function<bool()>& next);

}  // namespace sluice::core
