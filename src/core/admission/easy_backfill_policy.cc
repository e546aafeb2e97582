// easy_backfill (R-ADM-2, R-SIM-1e): the blocked head gets a reservation at the shadow time
// S; a later job may start now if it fits and either ends by S (now + run limit <= S) or
// uses no more than the `extra` slots the head will not need at S.
//
// Steps, per queue and cycle:
//  1. StartInOrder: start jobs in queue order until the head does not fit.
//  2. The reservation, once, from the jobs running now (including those started earlier
//     in this cycle) and their expected ends; computed when the first later job needs it
//     (a full cluster never does).
//  3. Scan the rest of the queue in order: Nominate each job; start it when it ends by S,
//     or else when its slots fit in `extra` (then `extra` shrinks by its slots).
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/admission/policy.h"
#include "core/admission/reservation.h"
#include "core/admission/shared_reasons.h"

namespace sluice::core {
namespace {

// Started-this-cycle jobs have no start sequence yet; they follow every running job.
constexpr uint64_t kThisCycleOrderBase = uint64_t{1} << 62;

Reservation ReserveForHead(const Job& head, const AdmissionContext& ctx) {
  const std::span<const StartedJob> started_now = ctx.started();
  std::vector<Release> started;
  started.reserve(started_now.size());
  for (size_t i = 0; i < started_now.size(); ++i) {
    const Job& job = *started_now[i].job;
    started.push_back(
        Release{.expected_end = AddDuration(ctx.now(), job.spec.run_limit.value_or(kInfinite)),
                .order = kThisCycleOrderBase + i,
                .slots = started_now[i].slots});
  }
  // The running jobs come in (estimated end, start order) from the state: no sort per cycle.
  return ComputeReservation(head.min_slots, ctx.FreeFor(head), ctx.now(),
                            ctx.state().running_by_end(), started);
}

class EasyBackfillPolicy final : public AdmissionPolicy {
 public:
  void Admit(const Queue& /*queue*/, const QueueOrder& order,
             AdmissionContext& ctx) const override {
    PendingReasons head_reasons;
    auto head_it = StartInOrder(order, ctx, head_reasons);
    if (head_it == order.end()) return;
    const Job& head = *head_it;
    ctx.MarkBlockedHead(head);
    if (ctx.explain()) ctx.Pend(head, std::move(head_reasons));

    // Computed when a job first needs it: nothing starts before that, so it sees the same
    // running jobs and free slots as right after the head; a full cluster never needs it.
    std::optional<Reservation> reserved;
    auto reservation = [&]() -> Reservation& {
      if (!reserved) reserved = ReserveForHead(head, ctx);
      return *reserved;
    };
    // The jobs the reservation keeps back all wait for it: one shared reason (the shadow time
    // does not move during the scan).
    std::optional<SharedReasons> reserved_reasons;
    for (auto it = std::next(head_it); it != order.end(); ++it) {
      const Job& job = *it;
      if (!ctx.explain()) {
        // Unexplained, a job that needs more slots than are free is passed over before its
        // eligibility checks (Nominate would refuse it unasked); nothing starts while they
        // run, so the order of the two tests changes no decision.
        if (ctx.TotalFree() == 0) break;  // nothing more can start
        if (job.min_slots > ctx.TotalFree()) continue;
      }
      if (ctx.DecidedThisCycle(job)) continue;
      if (auto why = ctx.Ineligible(job)) {
        if (ctx.explain()) ctx.Pend(job, std::move(*why));
        continue;
      }
      const Instant end = ctx.EndIfStartedNow(job);
      const bool ends_in_time = end != kInfinite && end <= reservation().shadow;
      // A job that would delay the head cannot start whether it fits or not; only an
      // explanation needs to know which of the two keeps it waiting.
      if (!ends_in_time && job.min_slots > reservation().extra && !ctx.explain()) continue;
      AllocOutcome outcome = ctx.Nominate(job);
      if (!outcome.ok) {
        if (ctx.explain()) ctx.Pend(job, std::move(outcome.reasons));
        continue;
      }
      const int32_t slots = outcome.allocation.TotalSlots();
      if (ends_in_time) {
        ctx.Start(job, std::move(outcome.allocation), /*backfilled=*/true);
      } else if (slots <= reservation().extra) {
        reservation().extra -= slots;
        ctx.Start(job, std::move(outcome.allocation), /*backfilled=*/true);
      } else if (ctx.explain()) {
        if (!reserved_reasons) {
          reserved_reasons.emplace(ReasonDetail{.job = head.spec.id, .time = reservation().shadow});
        }
        ctx.Pend(job, reserved_reasons->For(ReasonCode::kReserved));
      }
    }
  }
};

}  // namespace

std::unique_ptr<AdmissionPolicy> MakeEasyBackfillPolicy() {
  return std::make_unique<EasyBackfillPolicy>();
}

}  // namespace sluice::core
