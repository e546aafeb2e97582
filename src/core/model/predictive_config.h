// The knobs of the predictive_backfill admission policy (issue 20), as plain data in
// QueueSpec::predictive. Their meaning and the policy's steps are documented in
// core/admission/predictive_backfill.h; the defaults were chosen on the public traces of
// docs/studies/admission.md only.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/time.h"

namespace sluice::core {

// The order in which backfill candidates (the jobs after a blocked head) are tried.
enum class BackfillOrder {
  kQueue,      // queue order, as easy_backfill
  kShortest,   // shortest predicted runtime first; ties in queue order
  kExpansion,  // largest expansion factor (wait + predicted) / predicted first; ties in queue order
};
std::string_view ToString(BackfillOrder order);
std::optional<BackfillOrder> ParseBackfillOrder(std::string_view text);

// Which of the user's finished jobs a prediction averages.
enum class HistoryMatch {
  kUser,       // the user's last jobs (Tsafrir et al.)
  kUserLimit,  // the user's last jobs with the same run limit; else the user's last jobs
};
std::string_view ToString(HistoryMatch match);
std::optional<HistoryMatch> ParseHistoryMatch(std::string_view text);

struct PredictiveKnobs {
  // A job's runtime is predicted as the mean of its user's last `history_runs` runtimes
  // (1..RuntimeHistory::kKept), capped at its run limit.
  int32_t history_runs = 2;
  // Defaults since session 9: user_limit and expansion, the best setting measured on KTH,
  // SDSC and HPC2N with the jitter check (docs/studies/admission.md, "Defaults").
  HistoryMatch history_match = HistoryMatch::kUserLimit;
  BackfillOrder order = BackfillOrder::kExpansion;
  // A candidate that has waited this long (seconds since submission) is tried before every
  // other, in queue order, as easy_backfill would try it; 0 turns this off.
  Duration age_after = 0;
  // A candidate with a run limit L that has waited at least age_limits x L is tried first
  // too (aging relative to the job's own size: a short job ages soon, a long one late);
  // 0 turns this off. Either rule makes a candidate aged.
  int32_t age_limits = 0;
  // A job that has waited this long (seconds since submission) gets a reservation of its
  // own from run limits, which no backfilled job may delay; 0 turns these off.
  Duration reserve_after = 0;
  // How many such waiting jobs, in queue order after the head, get a reservation.
  int32_t reserve_depth = 0;
  // The first `reserve_top` jobs of the queue (the head and the next eligible ones, in queue
  // order) get joint reservations from run limits, as conservative backfilling gives them:
  // no backfilled job may delay any of them. 1: the head only (EASY's protection).
  int32_t reserve_top = 1;
  // Also protect the head's reservation computed from predictions (running jobs end at their
  // predicted ends, candidates run their predicted runtimes): a candidate must delay neither.
  bool predicted_guard = false;

  friend bool operator==(const PredictiveKnobs&, const PredictiveKnobs&) = default;
};

}  // namespace sluice::core
