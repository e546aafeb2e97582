#include "core/admission/diagnostics.h"

#include <algorithm>

#include "core/alloc/capacity.h"
#include "core/alloc/host_view.h"

namespace sluice::core {

std::string_view ToString(Classification classification) {
  switch (classification) {
    case Classification::kNew:
      return "NEW";
    case Classification::kAdmitted:
      return "ADMITTED";
    case Classification::kTemporarilyUnavailable:
      return "TEMPORARILY_UNAVAILABLE";
    case Classification::kUnschedulable:
      return "UNSCHEDULABLE";
  }
  return "UNKNOWN";
}

std::string_view ToString(GateState gate) {
  switch (gate) {
    case GateState::kNone:
      return "none";
    case GateState::kCounting:
      return "counting";
    case GateState::kActive:
      return "active";
  }
  return "unknown";
}

namespace {

Classification Classify(const Job& job) {
  switch (job.state) {
    case JobState::kPending:
    case JobState::kHeld:
      return job.classified ? Classification::kTemporarilyUnavailable : Classification::kNew;
    case JobState::kAdmitting:
    case JobState::kRunning:
    case JobState::kDone:
      return Classification::kAdmitted;
    case JobState::kExit:
      return job.exit_cause == ExitCause::kUnschedulable ? Classification::kUnschedulable
                                                         : Classification::kAdmitted;
    case JobState::kCancelled:
      return job.start_time > 0 ? Classification::kAdmitted : Classification::kNew;
  }
  return Classification::kNew;
}

// Configured slots of the queue's hosts that some part of the request selects.
int64_t EligibleSlots(const Job& job, const ClusterState& state) {
  const Capacity all = Capacity::AllConfigured(state);
  CapacityHostView view(state, all);
  const Queue& queue = state.topology().queues()[job.queue];
  int64_t slots = 0;
  auto consider = [&](HostIndex h) {
    view.Bind(h);
    for (const resreq::Compound& alternative : job.request->alternatives) {
      for (const resreq::Primary& part : alternative.parts) {
        if (state.requests().PassesSelect(part.select, h, view)) {
          slots += state.topology().hosts()[h].spec.slots;
          return;
        }
      }
    }
  };
  state.topology().ForEachHostOf(queue, consider);
  return slots;
}

}  // namespace

AdmissionDiagnostics Diagnose(const Job& job, const ClusterState& state, Instant now) {
  const Queue& queue = state.topology().queues()[job.queue];
  const AdmissionRecord& record = job.admission;
  AdmissionDiagnostics d;
  d.policy = queue.spec.policy;
  d.sequence = job.seq;
  const bool waiting = job.state == JobState::kPending || job.state == JobState::kHeld;
  d.pending_age = waiting ? std::max<Duration>(0, now - record.enqueue_time) : 0;
  d.request = std::to_string(job.min_slots) + (job.min_slots == 1 ? " task" : " tasks");
  const std::string text = resreq::Normalize(*job.request, state.requests().expr_pool());
  if (!text.empty()) d.request += ": " + text;
  d.classification = Classify(job);
  d.bypass_count = record.bypass_count;
  d.max_bypass = queue.spec.max_bypass;
  d.first_blocked = record.first_blocked;
  d.max_head_wait = queue.spec.max_head_wait;
  d.gate = record.gate_active()   ? GateState::kActive
           : record.first_blocked ? GateState::kCounting
                                  : GateState::kNone;
  d.gate_since = record.gate_since;
  d.requested_slots = job.min_slots;
  d.eligible_slots = EligibleSlots(job, state);
  return d;
}

std::vector<QueueCounters> Counters(const ClusterState& state, Instant now) {
  std::vector<QueueCounters> counters;
  for (const Queue& queue : state.topology().queues()) {
    QueueCounters c{.queue = queue.spec.name, .totals = queue.totals};
    for (const PendingEntry& entry : queue.pending) {
      const Job& job = *entry.job;
      c.oldest_pending_age = std::max(c.oldest_pending_age, now - job.admission.enqueue_time);
      if (job.admission.gate_active()) ++c.gated_heads;
    }
    counters.push_back(std::move(c));
  }
  return counters;
}

}  // namespace sluice::core
