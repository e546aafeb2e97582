#include "core/cycle/events.h"

#include <type_traits>

namespace sluice::core {
namespace {

// What a new submission must satisfy beyond ClusterState::Submit's own checks, which also
// hold for a job restored from the store (its queue may have closed since, and the jobs its
// dependency names may have been purged).
Status CheckSubmission(const JobSpec& spec, const ClusterState& state) {
  const std::string job = "job " + std::to_string(spec.id);
  if (!state.queues().empty()) {
    const std::optional<QueueIndex> queue =
        spec.queue.empty() ? std::optional<QueueIndex>(state.default_queue()) : state.FindQueue(spec.queue);
    if (queue && !state.queues()[*queue].spec.open) {
      return FailedPrecondition(job + ": queue '" + state.queues()[*queue].spec.name +
                                "' is closed to new jobs");
    }
  }
  if (spec.depend.empty()) return Status::Ok();
  Result<Dependency> dependency = Dependency::Parse(spec.depend);
  if (!dependency) return Status::Ok();  // Submit reports the syntax error
  for (JobId named : dependency->jobs()) {
    if (!state.Knows(named)) {
      return NotFound(job + ": depend: no job " + std::to_string(named));
    }
  }
  return Status::Ok();
}

}  // namespace

Status Apply(const Event& event, Instant now, ClusterState& state) {
  return std::visit(
      [&](const auto& e) -> Status {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, JobSubmitted>) {
          SLUICE_RETURN_IF_ERROR(CheckSubmission(e.spec, state));
          return state.Submit(e.spec);
        } else if constexpr (std::is_same_v<E, JobCancelled>) {
          return state.Cancel(e.job, now);
        } else if constexpr (std::is_same_v<E, JobFinished>) {
          return state.Finish(e.job, now, e.exit_code, e.cause);
        } else if constexpr (std::is_same_v<E, HostAdded>) {
          return state.AddHost(e.host);
        } else if constexpr (std::is_same_v<E, HostChanged>) {
          return state.SetHostState(e.host, e.state);
        } else if constexpr (std::is_same_v<E, HostLost>) {
          return state.SetHostState(e.host, HostState::kUnavail);
        } else if constexpr (std::is_same_v<E, JobHeld>) {
          return state.SetHeld(e.job, true);
        } else if constexpr (std::is_same_v<E, JobReleased>) {
          return state.SetHeld(e.job, false);
        } else if constexpr (std::is_same_v<E, JobRequeued>) {
          return state.Requeue(e.job);
        } else if constexpr (std::is_same_v<E, QueueChanged>) {
          return state.SetQueueStatus(e.queue, e.open, e.active);
        } else {
          static_assert(std::is_same_v<E, ConfigChanged>);
          return state.Reconfigure(e.config);
        }
      },
      event);
}

}  // namespace sluice::core
