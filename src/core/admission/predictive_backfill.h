// predictive_backfill (issue 20): EASY backfilling whose candidates are ordered by
// predicted runtime, with EASY's protection of the head on run limits kept exactly.
//
// Parts, each in its own file and tested on its own:
//   - runtime_prediction.h: a job's runtime predicted from its user's last runs
//     (RuntimeHistory, kept by ClusterState), corrected when a running job outlives it;
//   - backfill_order.h: the order candidates are tried in (QueueSpec::predictive.order);
//   - head_protection.h: the reservations from run limits a backfilled job must not delay
//     (the head's, plus one for each job waiting past `reserve_after`, plus joint ones for
//     the first `reserve_top` jobs on a SlotProfile, slot_profile.h), and optionally the
//     head's reservation from predictions (predicted_reservation.h, `predicted_guard`).
// The start-time forecast (core/driver/forecast.h) runs this policy's jobs for their
// predicted runtimes (ExpectedEndForForecast, runtime_prediction.h) and marks its estimates
// as predicted.
// Predictions only choose which of the jobs that EASY's rule allows start first; they never
// let a job start that the run-limit rule forbids. So the head's reservation from run
// limits is never made later by a backfill, as under easy_backfill.
//
// Steps, per queue and cycle (predictive_backfill_policy.cc):
//  1. StartInOrder: start jobs in queue order until the head does not fit.
//  2. The head is blocked: MarkBlockedHead, explain it with its own reasons.
//  3. CollectCandidates: the later jobs with their predicted runtimes, the protected
//     waiters and the next reserve_top - 1 eligible jobs; SortCandidates into the
//     configured order. A cycle that does not explain leaves out candidates wider than the
//     free slots (free slots only fall during the pass, so they could not start).
//  4. For each candidate in that order: skip it if Ineligible; Nominate it; start it when
//     HeadProtection::Delays finds no guard it would delay (then Charge); otherwise it waits
//     as RESERVED for the guard's job, from the guard's reservation time (for a joint
//     reservation: the first of the first K jobs, in queue order, whose reservation begins
//     before the candidate would end).
// Explanations (ctx.explain): every job left pending gets exactly one PendJob: its
// ineligibility, its allocation failure, or RESERVED naming the head or the protected
// waiter whose reservation it would delay (the head's when both).
#pragma once

#include <memory>

#include "core/admission/policy.h"

namespace sluice::core {

std::unique_ptr<AdmissionPolicy> MakePredictiveBackfillPolicy();

}  // namespace sluice::core
