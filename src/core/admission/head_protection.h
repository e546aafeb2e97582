// HeadProtection: the reservations that predictive_backfill's backfilled jobs must not
// delay (issue 20). Guards 1 and 2 are computed from run limits, exactly as easy_backfill
// computes its head's (reservation.h), never from predictions: so whatever the
// predictions, no job this policy backfills makes a protected job's run-limit reservation
// later than it was (tests/property/predictive_backfill_property_test.cc checks it every cycle).
//
// Guards, in this order:
//   1. the blocked head: (S_h, extra_h) = ComputeReservation(head's slots, ...);
//   2. each protected waiter w — a later job that has waited at least `reserve_after`
//      (QueueSpec::predictive), at most `reserve_depth` of them in queue order — gets
//      (S_w, extra_w) computed the same way, as if it were the head;
//   3. with `reserve_top` = K > 1, the first K jobs of the queue (the head, then the next
//      K - 1 eligible jobs in queue order) get *joint* reservations from run limits, as
//      conservative backfilling gives them: on a SlotProfile (slot_profile.h) of the running
//      jobs' run-limit ends, each in queue order is placed at the earliest time it fits for
//      its run limit after the ones before it. A candidate c fits when free >= s on
//      [now, e) of that profile (its own reservation taken out if c is one of the K); a
//      started candidate takes [now, e) from the profile. So no job started ahead of them
//      makes any of the first K start later than its joint reservation;
//   4. with `predicted_guard`, the head again: (S_p, extra_p) from predictions
//      (predicted_reservation.h), tested with e = now + the candidate's predicted runtime.
//      It only removes backfills that guards 1 to 3 allow.
// A candidate c asking s slots whose run limit L_c ends at e = now + L_c delays guard g
// unless  e <= S_g  (it ends before g's reservation begins)  or  s <= extra_g  (it uses only
// slots g will not need); when c starts, extra_g -= s for each g with e > S_g. A guard is
// never tested against its own job.
// Reservations are computed on first use, from the jobs running then (including this
// cycle's starts), like easy_backfill's: a cycle with a full cluster computes none.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/admission/admission_context.h"
#include "core/admission/reservation.h"
#include "core/admission/runtime_prediction.h"
#include "core/admission/slot_profile.h"

namespace sluice::core {

struct Guard {
  const Job* job = nullptr;
  Reservation reservation;
};

class HeadProtection {
 public:
  // REQUIRES: `head`, every waiter, every `top` job and `predictor` outlive this object;
  // waiters and `top` (the jobs after the head that get joint reservations, guard 3) are in
  // queue order. With a `predictor`, the head also gets the predicted guard
  // (predicted_reservation.h), tested after the run-limit guards.
  HeadProtection(const Job& head, std::vector<const Job*> waiters,
                 const RuntimePredictor* predictor = nullptr, std::vector<const Job*> top = {});

  // The first guard a candidate of `slots` slots would delay (the head's first), or nullptr
  // when it delays none.
  const Guard* Delays(const Job& candidate, int64_t slots, AdmissionContext& ctx);
  // Records that `candidate` started with `slots` slots. REQUIRES: Delays() returned nullptr.
  void Charge(const Job& candidate, int64_t slots, Instant now);

  // The head's reservation from run limits (computed now if not yet).
  const Reservation& HeadReservation(AdmissionContext& ctx);
  // The joint reservation's start of `job` (guard 3): nullopt when it has none (not among
  // the first K, started, or it never fits).
  std::optional<Instant> JointStart(const Job& job, AdmissionContext& ctx);

 private:
  struct Joint {
    Guard guard;  // the job, and its reservation's start as `shadow`
    Instant end = 0;
    int64_t slots = 0;
  };
  void Compute(AdmissionContext& ctx);
  void ComputeJoint(AdmissionContext& ctx);
  // Guard 3 for a candidate ending at `end`: the first joint reservation it would delay.
  const Guard* DelaysJoint(const Job& candidate, Instant now, Instant end, int64_t slots);
  // now + the candidate's predicted runtime. REQUIRES: a predictor.
  Instant PredictedEnd(const Job& candidate, Instant now) const;
  const Job* head_;
  std::vector<const Job*> waiters_;
  std::vector<Guard> guards_;  // head first, then waiters; empty until computed
  const RuntimePredictor* predictor_;
  std::optional<Guard> predicted_;      // the head's predicted guard, with a predictor
  std::vector<const Job*> top_;         // guard 3's jobs after the head
  std::vector<Joint> joint_;            // guard 3: head first, then top_ (those that fit)
  std::optional<SlotProfile> profile_;  // guard 3's profile, with every joint reservation
  bool computed_ = false;
};

// The EASY reservation of `job` (its min_slots), from the jobs running now and this cycle's
// starts, with run limits as their ends (reservation.h), counting the free slots it may use.
Reservation ReserveFromRunLimits(const Job& job, AdmissionContext& ctx);

}  // namespace sluice::core
