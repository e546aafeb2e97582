#include "core/driver/drive_loop.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "core/cycle/events.h"

namespace sluice::core {

DriveLoop::DriveLoop(const Scheduler& scheduler, ClusterState& state)
    : scheduler_(scheduler), state_(state) {}

const CycleResult& DriveLoop::Cycle(Instant now, const CycleOptions& options,
                                    DecisionHandler& handler) {
  ClearDueWake(now);
  workspace_.Recycle(std::move(last_));
  last_ = scheduler_.RunCycle(state_, now, options, &workspace_);
  // Moves only the starts' allocations into their jobs: the decisions stay to be handed out.
  Commit(std::move(last_), now, state_);  // NOLINT(bugprone-use-after-move)
  for (Decision& decision : last_.decisions) Dispatch(decision, now, handler);
  if (last_.wake_at && *last_.wake_at > now) WakeAt(*last_.wake_at);
  return last_;
}

void DriveLoop::ReleaseBuffers() {
  last_ = CycleResult{};
  workspace_ = CycleWorkspace{};
}

void DriveLoop::WakeAt(Instant t) { wake_at_ = std::min(wake_at_.value_or(kInfinite), t); }

Instant DriveLoop::NextTime(Instant next_input) const {
  return std::min(next_input, wake_at_.value_or(kInfinite));
}

void DriveLoop::ClearDueWake(Instant t) {
  if (wake_at_ && *wake_at_ <= t) wake_at_.reset();
}

Status DriveLoop::RequeueAtOnce(std::span<const PreemptJob> preempted, Instant now) {
  for (const PreemptJob& preempt : preempted) {
    SLUICE_RETURN_IF_ERROR(Apply(JobRequeued{preempt.victim}, now, state_));
    WakeAt(now);
  }
  return Status::Ok();
}

void Dispatch(Decision& decision, Instant now, DecisionHandler& handler) {
  std::visit(
      [&](auto& d) {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, StartJob>) {
          handler.OnStart(d, now);
        } else if constexpr (std::is_same_v<T, FailJob>) {
          handler.OnFail(d, now);
        } else if constexpr (std::is_same_v<T, PendJob>) {
          handler.OnPend(d, now);
        } else if constexpr (std::is_same_v<T, PreemptJob>) {
          handler.OnPreempt(d, now);
        } else if constexpr (std::is_same_v<T, DropPreemption>) {
          handler.OnDropPreemption(d, now);
        } else if constexpr (std::is_same_v<T, UpdateReclaim>) {
          handler.OnReclaim(d, now);
        } else {
          static_assert(std::is_same_v<T, UpdateAdmission>, "a Decision without a handler method");
          handler.OnUpdate(d, now);
        }
      },
      decision);
}

}  // namespace sluice::core
