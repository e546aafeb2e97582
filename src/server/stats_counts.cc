// Controller::SampleStats (controller.h): what the dashboard's time series and its "now"
// read of the cluster (stats_sampler.h, R-UI-3), taken under the controller's lock.
#include "server/controller.h"
#include "server/stats_sampler.h"

namespace sluice::server {

namespace {

constexpr std::string_view kRunning = "RUNNING";
constexpr std::string_view kAdmitting = "ADMITTING";
constexpr std::string_view kPending = "PENDING";
constexpr std::string_view kHeld = "HELD";

}  // namespace

// Slots from the hosts; every job number from the book's counts (kept as jobs change, plus
// the array elements without a record), so the numbers agree with each other and with
// `sluice jobs` (stats_sampler.h).
void Controller::SampleStats(StatsSample& out, bool with_counts) {
  std::lock_guard lock(ctx_.mu());
  out.time = ctx_.Now();
  for (const core::Host& host : ctx_.state().topology().hosts()) {
    if (host.membership == core::HostMembership::kGone) continue;  // out of the configuration
    out.hosts += 1;
    out.used_slots += host.used_slots;
    if (!host.AcceptsWork()) continue;
    out.hosts_ok += 1;
    out.slots += host.spec.slots;
  }
  const JobCounts counts = book_.CountsWithElements();
  const core::Topology& topology = ctx_.state().topology();
  for (const core::Queue& queue : topology.queues()) {  // in queue order, as FindQueue indexes
    out.queues.push_back({.name = queue.spec.name, .used_slots = queue.used_slots});
  }
  // Running: the jobs that hold an allocation (admitting ones too), as a queue's running_jobs
  // and `sluice queues` count them. A job of a queue no longer configured counts in the totals
  // (as in jobs_by_state), in no queue's row.
  QueueSample unlisted;
  for (const auto& [key, n] : counts.by_state) {
    const auto& [state, queue_name] = key;
    const std::optional<QueueIndex> index = topology.FindQueue(queue_name);
    QueueSample& q = index ? out.queues[*index] : unlisted;
    if (state == kRunning || state == kAdmitting) q.running += n;
    if (state == kAdmitting) out.admitting += n;
    if (state == kPending) q.pending += n;
    if (state == kHeld) q.held += n;
  }
  const auto add = [&](const QueueSample& q) {
    out.running += q.running;
    out.pending += q.pending;
    out.held += q.held;
  };
  for (const QueueSample& q : out.queues) add(q);
  add(unlisted);
  if (!with_counts) return;
  for (const auto& [key, n] : counts.by_state) out.jobs_by_state[key.first] += n;
  // A held job's wait reason is HELD; it is counted as held, not as pending.
  for (const auto& [key, n] : counts.by_reason) {
    if (key.first != kHeld) out.pending_by_reason[key.first] += n;
  }
  for (const auto& [key, n] : counts.by_user) {
    const auto& [user, state] = key;
    UserSample& u = out.users[user];
    if (state == kRunning) u.running += n;
    if (state == kPending) u.pending += n;
    if (state == kHeld) u.held += n;
  }
  for (const auto& [user, slots] : book_.SlotsHeldByUser()) {
    if (slots > 0) out.users[user].slots += slots;
  }
  // Only users with a live job: ended ones are in the history page's usage.
  std::erase_if(out.users, [](const auto& entry) { return entry.second == UserSample{}; });
}

}  // namespace sluice::server
