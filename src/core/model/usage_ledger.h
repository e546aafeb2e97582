// UsageLedger: what jobs use and have used, as the scheduling policies read it: each named
// limit's usage by the running jobs (R-Q-2), each fairshare queue's decayed past usage per user
// (R-Q-4), and each user's last runtimes (predictive_backfill, issue 20). One of ClusterState's
// parts (cluster_state.h); ClusterState owns it, charges it when a job starts and when it stops
// running, and hands it out read-only.
//
// Representation: a LimitUsage (limit_usage.h); FairshareUsage (fairshare_usage.h) by queue and
// user, in an ordered map so that walks are deterministic; a RuntimeHistory (runtime_history.h).
// Invariants: the limit usage is the sum of Started() minus Stopped() over the running jobs
// (ConfigureLimits charges them again after a change of configuration); fairshare usage and
// runtimes change only when a job stops running.
// Thread-safety: none; owned by ClusterState.
// Implements the bookkeeping of R-Q-2 and R-Q-4, and issue 20's runtime history.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "base/ids.h"
#include "base/time.h"
#include "core/model/config.h"
#include "core/model/fairshare_usage.h"
#include "core/model/job.h"
#include "core/model/limit_usage.h"
#include "core/model/running_list.h"
#include "core/model/runtime_history.h"
#include "core/model/topology.h"

namespace sluice::core {

// The fairshare usage a running allocation accrues per second in `queue`: its slots plus its
// GPUs at the queue's fairshare_gpu_weight (R-Q-4, R-GPU-4).
inline double FairshareRate(const Allocation& allocation, const QueueSpec& queue) {
  return allocation.TotalSlots() + queue.fairshare_gpu_weight * allocation.TotalGpus();
}

class UsageLedger {
 public:
  using FairshareUsages = std::map<std::pair<QueueIndex, std::string>, FairshareUsage>;

  // --- Reads. ---

  // Named limits (R-Q-2) and what each consumer holds under them now.
  const LimitUsage& limits() const { return limits_; }
  // The decayed past usage of each user in each fairshare queue (runs that ended; the cycle
  // counts the running jobs itself).
  const FairshareUsages& fairshare() const { return fairshare_; }
  // Each user's last finished runtimes (predictive_backfill).
  const RuntimeHistory& runtimes() const { return runtimes_; }

  // --- Changes (ClusterState only). ---

  // Resolves `config`'s limits against the topology's hosts, then charges the running jobs.
  void ConfigureLimits(const ClusterConfig& config, const Topology& topology,
                       const RunningList& running);
  // `job` holds its allocation now (it started) / no longer (it ended or went back to its queue).
  void Started(const Job& job, const Topology& topology) { ChargeLimits(job, topology, +1); }
  void Stopped(const Job& job, const Topology& topology) { ChargeLimits(job, topology, -1); }
  // `job` stops running at `now`: in a fairshare queue its slot-seconds since it started count
  // for its user, decayed with the queue's half-life.
  void ChargeFairshare(const Job& job, const QueueSpec& queue, Instant now);
  // `job` finished at `now`: its runtime joins its user's history.
  void RecordRuntime(const Job& job, Instant now) {
    runtimes_.Record(job.spec.user, now - job.start_time, job.spec.run_limit);
  }
  // Study only (`sluice sim --oracle-runtimes`), through ClusterState: the history's table of
  // true runtimes.
  RuntimeHistory& runtimes_for_study() { return runtimes_; }

 private:
  void ChargeLimits(const Job& job, const Topology& topology, int sign) {
    limits_.Charge(job, topology.queues()[job.queue].spec.name, job.allocation, sign,
                   topology.host_resources(), topology.shared_resources());
  }

  LimitUsage limits_;
  FairshareUsages fairshare_;
  RuntimeHistory runtimes_;
};

}  // namespace sluice::core
