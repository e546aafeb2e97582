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
    HostGpus& host = hosts_[grant.host];
    SLUICE_CHECK((grant.gpus & ~host.all) == 0);  // devices the host has
    SetHeld(grant.host, HeldAfter(host, grant, true));
  }
}

void GpuUsage::Release(Instant t, const core::Allocation& allocation) {
  if (totals_.devices == 0) return;
  AdvanceTo(t);
  for (const core::HostGrant& grant : allocation.hosts) {
    if (grant.gpus == 0) continue;
    HostGpus& host = hosts_[grant.host];
    SLUICE_CHECK((grant.gpus & ~host.held) == 0);  // released once, by the job that held them
    SetHeld(grant.host, HeldAfter(host, grant, false));
  }
}

uint64_t GpuUsage::HeldAfter(HostGpus& host, const core::HostGrant& grant, bool hold) {
  if (grant.gpu_mem_mb == 0) {
    SLUICE_CHECK((grant.gpus & (hold ? host.held : ~host.whole)) == 0);  // no other holder
    host.whole = hold ? host.whole | grant.gpus : host.whole & ~grant.gpus;
    return hold ? host.held | grant.gpus : host.held & ~grant.gpus;
  }
  SLUICE_CHECK((grant.gpus & host.whole) == 0);  // shared devices are held whole by none
  if (host.sharers.empty()) host.sharers.assign(core::kMaxGpusPerHost, 0);
  uint64_t held = host.held;
  for (uint64_t rest = grant.gpus; rest != 0; rest &= rest - 1) {
    const int i = __builtin_ctzll(rest);
    int32_t& sharers = host.sharers[static_cast<size_t>(i)];
    sharers += hold ? 1 : -1;
    SLUICE_CHECK(sharers >= 0);
    if (sharers == 0) held &= ~(uint64_t{1} << i);
    if (sharers > 0) held |= uint64_t{1} << i;
  }
  return held;
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
