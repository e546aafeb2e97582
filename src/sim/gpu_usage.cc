#include "sim/gpu_usage.h"

#include "base/check.h"

namespace sluice::sim {

int64_t TotalGpus(const core::Topology& topology) {
  int64_t total = 0;
  for (const core::Host& host : topology.hosts()) total += host.devices.count();
  return total;
}

GpuUsage::GpuUsage(const core::Topology& topology) {
  hosts_.reserve(topology.hosts().size());
  for (const core::Host& host : topology.hosts())
    hosts_.push_back(HostGpus{.all = host.devices.all});
  totals_.devices = TotalGpus(topology);
}

void GpuUsage::Hold(Instant t, const core::Allocation& allocation) {
  if (totals_.devices == 0) return;  // a cluster without GPUs: nothing to integrate
  AdvanceTo(t);
  for (const core::HostGrant& grant : allocation.hosts) {
    if (grant.gpus == 0) continue;
    const HostGpus& host = hosts_[grant.host];
    SLUICE_CHECK((grant.gpus & ~host.all) == 0);  // devices the host has
    SLUICE_CHECK((grant.gpus & host.held) == 0);  // held by no other job
    SetHeld(grant.host, host.held | grant.gpus);
  }
}

void GpuUsage::Release(Instant t, const core::Allocation& allocation) {
  if (totals_.devices == 0) return;
  AdvanceTo(t);
  for (const core::HostGrant& grant : allocation.hosts) {
    if (grant.gpus == 0) continue;
    const HostGpus& host = hosts_[grant.host];
    SLUICE_CHECK((grant.gpus & ~host.held) == 0);  // released once, by the job that held them
    SetHeld(grant.host, host.held & ~grant.gpus);
  }
}

void GpuUsage::AdvanceTo(Instant t) {
  SLUICE_CHECK(t >= last_);
  // Nothing held means nothing stranded either; skipping also keeps `t - last_` away from the
  // initial time (the lowest Instant) of a run's first report.
  if (held_ > 0) {
    totals_.held_seconds += held_ * (t - last_);
    totals_.stranded_seconds += stranded_ * (t - last_);
  }
  last_ = t;
}

void GpuUsage::SetHeld(HostIndex h, uint64_t held) {
  HostGpus& host = hosts_[h];
  held_ -= __builtin_popcountll(host.held);
  stranded_ -= StrandedGpus(host.all, host.held);
  host.held = held;
  held_ += __builtin_popcountll(host.held);
  stranded_ += StrandedGpus(host.all, host.held);
}

}  // namespace sluice::sim
