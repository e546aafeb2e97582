#include "core/model/usage_ledger.h"

namespace sluice::core {

void UsageLedger::ConfigureLimits(const ClusterConfig& config, const Topology& topology,
                                  const RunningList& running) {
  limits_.Configure(config.limits, topology.HostNames(), config.host_groups);
  for (const RunningEntry& entry : running) Started(*entry.job, topology);
}

void UsageLedger::ChargeFairshare(const Job& job, const QueueSpec& queue, Instant now) {
  if (queue.fairshare.empty() || now <= job.start_time) return;
  const double used =
      static_cast<double>(now - job.start_time) * FairshareRate(job.allocation, queue);
  fairshare_[{job.queue, job.spec.user}].Add(used, now, queue.fairshare_half_life);
}

}  // namespace sluice::core
