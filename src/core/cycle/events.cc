#include "core/cycle/events.h"

#include <type_traits>
#include <utility>

namespace sluice::core {
namespace {

// What a new submission must satisfy beyond ClusterState::Submit's own checks, which also
// hold for a job restored from the store (its queue may have closed since, and the jobs its
// dependency names may have been purged).
Status CheckSubmission(const JobSpec& spec, const ClusterState& state) {
  // Named only in errors: every submission passes here (200,000 of a trace replay).
  auto job = [&spec] { return "job " + std::to_string(spec.id); };
  if (!state.topology().queues().empty()) {
    const std::optional<QueueIndex> queue =
        spec.queue.empty() ? std::optional<QueueIndex>(state.topology().default_queue())
                           : state.topology().FindQueue(spec.queue);
    if (queue && !state.topology().queues()[*queue].spec.open) {
      return FailedPrecondition(job() + ": queue '" + state.topology().queues()[*queue].spec.name +
                                "' is closed to new jobs");
    }
  }
  if (!spec.reservation.empty() && state.reservations().Find(spec.reservation) < 0) {
    return NotFound(job() + ": no reservation '" + spec.reservation + "'");
  }
  if (spec.depend.empty()) return Status::Ok();
  Result<Dependency> dependency = Dependency::Parse(spec.depend);
  if (!dependency) return Status::Ok();  // Submit reports the syntax error
  for (JobId named : dependency->jobs()) {
    if (!state.Knows(named)) {
      return NotFound(job() + ": depend: no job " + std::to_string(named));
    }
  }
  return Status::Ok();
}

// The allocation fits what the hosts that accept work have free now.
bool Fits(const Allocation& alloc, const ClusterState& state) {
  const Topology& topology = state.topology();
  for (const HostGrant& g : alloc.hosts) {
    const Host& host = topology.hosts()[g.host];
    if (!host.AcceptsWork() || host.SlotsTaken(g) > host.FreeSlots()) return false;
    if (g.whole_host && host.running_jobs > 0) return false;
    if (!host.CanHoldGpus(g)) return false;  // held, absent, or short of memory
    for (const ResourceAmount& r : g.resources) {
      if (r.amount > host.ResourceFree(r.id)) return false;
    }
  }
  for (const ResourceAmount& r : alloc.shared) {
    if (r.amount > topology.SharedTotal(r.id) - topology.SharedUsed(r.id)) return false;
  }
  return true;
}

Status RestoreAllocation(const AllocationRestored& e, ClusterState& state) {
  const Job* job = state.FindJob(e.job);
  if (job == nullptr) return NotFound("job " + std::to_string(e.job) + ": not restored");
  if (job->state != JobState::kPending) {
    return FailedPrecondition("job " + std::to_string(e.job) + ": not pending");
  }
  if (e.allocation.hosts.empty() || !Fits(e.allocation, state)) {
    return FailedPrecondition("job " + std::to_string(e.job) + ": allocation does not fit");
  }
  state.Start(e.job, e.allocation, e.start_time);
  if (e.preempted_for != kNoJob) state.MarkPreempted(e.job, e.preempted_for);
  return Status::Ok();
}

// The spec an event hands to the state: copied from an event the caller keeps (`E` const),
// moved out of one it gave up (Apply(Event&&)).
template <typename E>
decltype(auto) Take(E& e) {
  if constexpr (std::is_const_v<E>) {
    return (e);
  } else {
    return std::move(e);
  }
}

// The server's restart and retention events. `EventT`: `const Event` or `Event` (see Take).
template <typename EventT>
Status ApplyServerEvent(EventT& event, Instant now, ClusterState& state) {
  if (auto* e = std::get_if<JobRestored>(&event)) {
    return state.Restore(Take(e->spec), e->seq, e->record);
  }
  if (const auto* e = std::get_if<AllocationRestored>(&event)) return RestoreAllocation(*e, state);
  if (const auto* e = std::get_if<EndedJobNoted>(&event)) {
    return state.NoteEnded(e->job, e->state, e->started);
  }
  if (const auto* e = std::get_if<ReclaimDeadlineRestored>(&event)) {
    if (e->queue >= state.topology().queues().size())
      return NotFound("no queue " + std::to_string(e->queue));
    state.SetReclaimDeadline(e->queue, e->deadline);
    return Status::Ok();
  }
  if (const auto* e = std::get_if<JobForgotten>(&event)) return state.Forget(e->job);
  if (const auto* e = std::get_if<JobWithdrawn>(&event)) return state.Withdraw(e->job);
  if (auto* e = std::get_if<ArrayRestored>(&event)) {
    return state.RestoreArray(Take(e->spec), e->array, e->base_seq, Take(e->states));
  }
  if (auto* e = std::get_if<JobModified>(&event)) return state.Modify(Take(e->spec), now);
  if (const auto* e = std::get_if<RunLimitChanged>(&event)) {
    return state.SetRunLimit(e->job, e->run_limit);
  }
  if (auto* e = std::get_if<JobRevived>(&event)) return state.Revive(Take(e->spec), e->seq, now);
  return Internal("not a server event");
}

template <typename EventT>
Status ApplyOne(EventT& event, Instant now, ClusterState& state) {
  return std::visit(
      [&](auto& e) -> Status {
        using E = std::remove_cvref_t<decltype(e)>;
        if constexpr (std::is_same_v<E, JobSubmitted>) {
          SLUICE_RETURN_IF_ERROR(CheckSubmission(e.spec, state));
          if (!e.array.empty()) return state.SubmitArray(e.spec, e.array);
          return state.Submit(Take(e.spec));
        } else if constexpr (std::is_same_v<E, JobCancelled>) {
          return state.Cancel(e.job, now);
        } else if constexpr (std::is_same_v<E, JobFinished>) {
          return state.Finish(e.job, now, e.exit_code, e.cause, e.lost_run);
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
        } else if constexpr (std::is_same_v<E, ConfigChanged>) {
          return state.Reconfigure(e.config);
        } else if constexpr (std::is_same_v<E, ReservationsChanged>) {
          return state.SetReservations(e.reservations);
        } else if constexpr (std::is_same_v<E, ArrayElementsCancelled>) {
          return state.CancelElements(e.array, e.first, e.last, now);
        } else if constexpr (std::is_same_v<E, ArrayElementsHeld>) {
          return state.SetElementsHeld(e.array, e.first, e.last, e.held);
        } else {
          return ApplyServerEvent(event, now, state);
        }
      },
      event);
}

}  // namespace

Status Apply(const Event& event, Instant now, ClusterState& state) {
  Status status = ApplyOne(event, now, state);
  state.RefillArrays();  // an array's next elements become Jobs as room appears (R-UX-3)
  return status;
}

Status Apply(Event&& event, Instant now, ClusterState& state) {
  Status status = ApplyOne(event, now, state);
  state.RefillArrays();
  return status;
}

}  // namespace sluice::core
