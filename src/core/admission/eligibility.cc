#include "core/admission/eligibility.h"

#include <algorithm>

namespace sluice::core {
namespace {

// Whether the job's queue dispatches at `now`. IsEligible asks this of every job a cycle
// looks at; a bool, not WindowOpening's optional, which GCC returned through the stack and
// read back in a way that stalled (~2 % of a trace replay).
bool WindowOpen(const Job& job, const ClusterState& state, Instant now) {
  const DispatchWindows& windows = state.topology().WindowsOf(job.queue);
  return windows.always_open() || windows.IsOpen(state.WallTime(now));
}

// When the job's queue opens next (core time), or nullopt when it is open at `now`.
std::optional<Instant> WindowOpening(const Job& job, const ClusterState& state, Instant now) {
  if (WindowOpen(job, state, now)) return std::nullopt;
  const Instant opening = state.topology().WindowsOf(job.queue).NextOpening(state.WallTime(now));
  return opening == kInfinite ? kInfinite : opening - state.config().epoch_offset;
}

bool DependencyWaits(const Job& job, const ClusterState& state) {
  if (job.spec.depend.empty()) return false;
  const DependEvaluation* eval = state.dependencies().Of(job.spec.id);
  return eval != nullptr && eval->verdict != DependVerdict::kSatisfied;
}

// ARRAY_LIMIT (R-UX-3): the array's cap, all of it taken: a flagged element has `cap`
// elements running or allowed to start ahead of it (ClusterState::RefillArrays).
ReasonDetail ArrayLimitDetail(const Job& job, const ClusterState& state) {
  const JobId array_id = ArrayIdOf(job.spec.id);
  const JobArray* array = state.FindArray(array_id);
  const int64_t cap = array != nullptr ? array->cap : 0;
  return ReasonDetail{.code = ReasonCode::kArrayLimit,
                      .resource = "jobs",
                      .scope = "array " + std::to_string(array_id),
                      .used = cap,
                      .max = cap};
}

// RESERVATION_WAIT (R-RSV-2): a job inside an advance reservation runs only while one of its
// windows is open; when it has none left, or the reservation is gone, it waits for a change.
bool ReservationClosed(const Job& job, const ClusterState& state, Instant now) {
  if (job.spec.reservation.empty()) return false;
  const ReservationBook& book = state.reservations();
  const int32_t r = book.Find(job.spec.reservation);
  return r < 0 || !book.OpenWindow(r, now);
}

ReasonDetail ReservationWaitDetail(const Job& job, const ClusterState& state, Instant now) {
  ReasonDetail detail{.code = ReasonCode::kReservationWait,
                      .scope = "reservation " + job.spec.reservation};
  const ReservationBook& book = state.reservations();
  const int32_t r = book.Find(job.spec.reservation);
  if (r < 0) {
    detail.scope += " (deleted)";  // the job waits: it is not killed (R-RSV-2)
    return detail;
  }
  detail.host_names = book.HostList(r);
  if (std::optional<ReservationWindow> w = book.NextWindow(r, now)) {
    detail.time = w->begin;
    detail.until = w->end;
  }
  return detail;
}

// RESERVATION_DENIED (R-RSV-2): only the users a reservation admits run jobs in it. The
// controller refuses other users at submission; this keeps out the jobs of a driver that
// does not (the simulator, a test) and those of a user the reservation no longer lists.
bool ReservationDenies(const Job& job, const ClusterState& state) {
  if (job.spec.reservation.empty()) return false;
  const ReservationBook& book = state.reservations();
  const int32_t r = book.Find(job.spec.reservation);
  return r >= 0 && !book.Admits(r, job.spec.user);
}

}  // namespace

std::optional<PendingReasons> CheckEligibility(const Job& job, const ClusterState& state,
                                               Instant now) {
  PendingReasons reasons;
  if (job.state == JobState::kHeld) reasons.Add(ReasonDetail{.code = ReasonCode::kHeld});
  if (DependencyWaits(job, state)) {
    const DependEvaluation& eval = *state.dependencies().Of(job.spec.id);
    reasons.Add(ReasonDetail{.code = ReasonCode::kDependency,
                             .condition = eval.condition,
                             .never = eval.verdict == DependVerdict::kNever});
  }
  if (job.spec.begin_time > now) {
    reasons.Add(ReasonDetail{.code = ReasonCode::kBeginTime, .time = job.spec.begin_time});
  }
  if (std::optional<Instant> opening = WindowOpening(job, state, now)) {
    reasons.Add(ReasonDetail{.code = ReasonCode::kQueueWindow, .time = *opening});
  }
  if (job.array_limited) reasons.Add(ArrayLimitDetail(job, state));
  if (ReservationClosed(job, state, now)) reasons.Add(ReservationWaitDetail(job, state, now));
  if (ReservationDenies(job, state)) {
    reasons.Add(ReasonDetail{.code = ReasonCode::kReservationDenied,
                             .scope = "reservation " + job.spec.reservation});
  }
  if (reasons.empty()) return std::nullopt;
  return reasons;
}

bool IsEligible(const Job& job, const ClusterState& state, Instant now) {
  return job.state != JobState::kHeld && !job.array_limited && !DependencyWaits(job, state) &&
         job.spec.begin_time <= now && WindowOpen(job, state, now) &&
         !ReservationClosed(job, state, now) && !ReservationDenies(job, state);
}

std::optional<Instant> NextEligibilityTimer(const ClusterState& state, Instant now) {
  std::optional<Instant> next = state.NextBeginAfter(now);
  // A reservation's window opening lets its jobs in; one ending frees its hosts for others.
  const auto& queues = state.topology().queues();
  if (!state.reservations().empty() &&
      std::any_of(queues.begin(), queues.end(), [](const Queue& q) { return !q.pending.empty(); })) {
    if (std::optional<Instant> boundary = state.reservations().NextBoundaryAfter(now)) {
      if (!next || *boundary < *next) next = boundary;
    }
  }
  for (const Queue& queue : state.topology().queues()) {
    if (queue.pending.empty() || state.topology().WindowsOf(queue.index).always_open()) continue;
    const Instant wall = state.WallTime(now);
    if (state.topology().WindowsOf(queue.index).IsOpen(wall)) continue;
    const Instant opening =
        state.topology().WindowsOf(queue.index).NextOpening(wall) - state.config().epoch_offset;
    if (next && *next <= opening) continue;
    // Stops at the first job that only the window holds back (usually the first one).
    const bool wanted =
        std::any_of(queue.pending.begin(), queue.pending.end(), [&](const PendingEntry& e) {
          return e.job->state != JobState::kHeld && !DependencyWaits(*e.job, state) &&
                 e.job->spec.begin_time <= opening;
        });
    if (wanted) next = opening;
  }
  return next;
}

}  // namespace sluice::core
