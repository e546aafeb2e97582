#include "server/job_row.h"

#include <utility>

namespace sluice::server {

JobRow JobRow::From(store::StoredJob&& s) {
  JobRow row{.id = s.id,
             .spec = SparseText(std::move(s.spec)),
             .seq = s.seq,
             .submit_time = s.submit_time,
             .start_time = s.start_time,
             .end_time = s.end_time,
             .start_seq = s.start_seq,
             .enqueue_time = s.enqueue_time,
             .epoch = s.epoch,
             .preempted_for = s.preempted_for,
             .preempt_kill_at = s.preempt_kill_at,
             .exit_code = s.exit_code,
             .first_blocked = s.first_blocked,
             .gate_since = s.gate_since,
             .cpu_seconds = s.cpu_seconds,
             .max_rss_mb = s.max_rss_mb,
             .bypass_count = s.bypass_count,
             .dispatch_attempts = s.dispatch_attempts,
             .cancel_requested = s.cancel_requested,
             .policy = InternedText(s.policy)};
  row.cause = std::move(s.cause);
  row.allocation = std::move(s.allocation);
  row.message = std::move(s.message);
  row.array_states = std::move(s.array_states);
  row.steps = std::move(s.steps);
  row.events = std::move(s.events);
  return row;
}

store::StoredJob JobRow::Stored(std::string_view state, std::string_view phase) const {
  return store::StoredJob{.id = id,
                          .spec = spec,
                          .state = std::string(state),
                          .seq = seq,
                          .submit_time = submit_time,
                          .start_time = start_time,
                          .end_time = end_time,
                          .exit_code = exit_code,
                          .cause = cause,
                          .allocation = allocation,
                          .start_seq = start_seq,
                          .phase = std::string(phase),
                          .enqueue_time = enqueue_time,
                          .policy = policy,
                          .bypass_count = bypass_count,
                          .first_blocked = first_blocked,
                          .gate_since = gate_since,
                          .epoch = epoch,
                          .dispatch_attempts = dispatch_attempts,
                          .cancel_requested = cancel_requested,
                          .preempted_for = preempted_for,
                          .preempt_kill_at = preempt_kill_at,
                          .cpu_seconds = cpu_seconds,
                          .max_rss_mb = max_rss_mb,
                          .message = message,
                          .array_states = array_states,
                          .steps = steps,
                          .events = events};
}

}  // namespace sluice::server
