// Controller::SampleStats (controller.h): what the dashboard's time series and its "now"
// read of the cluster (stats_sampler.h, R-UI-3), taken under the controller's lock.
#include "server/controller.h"
#include "server/stats_sampler.h"

namespace sluice::server {

void Controller::SampleStats(StatsSample& out, bool with_counts) {
  std::lock_guard lock(ctx_.mu());
  out.time = ctx_.Now();
  for (const core::Host& host : ctx_.state().topology().hosts()) {
    out.hosts += 1;
    out.used_slots += host.used_slots;
    if (!host.AcceptsWork()) continue;
    out.hosts_ok += 1;
    out.slots += host.spec.slots;
  }
  for (const core::Queue& queue : ctx_.state().topology().queues()) {
    QueueSample q{
        .name = queue.spec.name, .running = queue.running_jobs, .used_slots = queue.used_slots};
    for (const core::PendingEntry& e : queue.pending) {
      (e.job->state == core::JobState::kHeld ? q.held : q.pending) += 1;
    }
    out.pending += q.pending;
    out.held += q.held;
    out.running += q.running;
    out.queues.push_back(std::move(q));
  }
  if (!with_counts) return;
  // The book's kept counts (JobBook::counts), summed over queues: no walk over every job.
  const JobCounts counts = book_.CountsWithElements();
  for (const auto& [key, n] : counts.by_state) out.jobs_by_state[key.first] += n;
  for (const auto& [key, n] : counts.by_reason) out.pending_by_reason[key.first] += n;
}

}  // namespace sluice::server
