// GpuUsage: which GPUs a simulation's jobs held over time, integrated into device-seconds for
// the GPU metrics (sim/metrics.h; issue 41, R-GPU-3).
//
// The replay reports every allocation when its job starts (Hold) and when it stops holding it
// (Release: finished, killed at its limit, cancelled while running, or preempted). Between two
// reports nothing changes, so the integrals are exact sums of (count x seconds).
//
// Representation: per host, its devices and the devices held (masks, as Host::devices and
// Host::gpus_used); running counts of held devices and of stranded devices; their integrals
// up to `last_`. A device is *stranded* when it is free on a host some of whose devices are
// held: a job that needs a whole host cannot use it.
// Invariants: held masks are within the host's devices; a device is held whole by at most one
// job and then by no shared grant (gpu[mode=shared], counted per device as sharers); a Hold of
// a held device or a Release of a free one is a bug: SLUICE_CHECK, so the replay itself checks
// R-GPU-3's "no device double-booked"; reports come in time order. A shared device counts
// once as held, whatever its sharers.
// Thread-safety: none; one per run.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/time.h"
#include "core/model/job.h"
#include "core/model/topology.h"

namespace sluice::sim {

// A run's GPU totals; all zero on a cluster without GPUs.
struct GpuTotals {
  int64_t devices = 0;           // GPUs of every configured host, whatever its state
  int64_t held_seconds = 0;      // integral of the devices held by jobs
  int64_t stranded_seconds = 0;  // integral of the stranded devices (see above)
};

// Free devices of a partly used host (`all` its devices, `held` those jobs hold): a job that
// needs a whole host cannot use them. None on a host wholly free or wholly held.
inline int64_t StrandedGpus(uint64_t all, uint64_t held) {
  return held == 0 ? 0 : std::popcount(all & ~held);
}
// The GPUs of every host of `topology`, whatever its state.
int64_t TotalGpus(const core::Topology& topology);

class GpuUsage {
 public:
  // The hosts' devices as `topology` declares them; the simulator's hosts never change.
  explicit GpuUsage(const core::Topology& topology);

  // The devices of `allocation` are held from `t`. REQUIRES: t >= the last report's time;
  // none of them is held.
  void Hold(Instant t, const core::Allocation& allocation);
  // They are free from `t`. REQUIRES: t >= the last report's time; all of them are held.
  void Release(Instant t, const core::Allocation& allocation);

  // The integrals up to the last report. Once a run has ended every job has released its
  // devices, so these are the run's totals.
  const GpuTotals& totals() const { return totals_; }

 private:
  struct HostGpus {
    uint64_t all = 0;
    uint64_t held = 0;             // whole, or by at least one sharer
    uint64_t whole = 0;            // held whole
    std::vector<int32_t> sharers;  // by index; empty until a shared grant
  };
  // Host h's devices after `grant` holds them (`hold`) or releases them.
  uint64_t HeldAfter(HostGpus& host, const core::HostGrant& grant, bool hold);
  // Integrates the current counts from `last_` to `t`.
  void AdvanceTo(Instant t);
  // Sets host `h`'s held mask, keeping the running counts in step.
  void SetHeld(HostIndex h, uint64_t held);

  std::vector<HostGpus> hosts_;  // by HostIndex
  GpuTotals totals_;
  int64_t held_ = 0;                                    // devices held now
  int64_t stranded_ = 0;                                // devices stranded now
  Instant last_ = std::numeric_limits<Instant>::min();  // the last report's time
};

}  // namespace sluice::sim
