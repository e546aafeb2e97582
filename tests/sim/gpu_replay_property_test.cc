// Property tests of GPUs in the simulator (issue 41) on seeded random clusters and workloads
// (STYLE.md "Property tests"; the seed is printed on failure):
//   - no device is held by two jobs at once, unless both share it (gpu[mode=shared]) within
//     its memory: a ledger of its own follows every start and release of the replay, host by
//     host, and agrees with the core's masks and reserved memory after each cycle;
//   - the same input replays to the same bytes and the same GPU totals, even shuffled;
//   - gpu_utilization and gpu_fragmentation lie in [0, 1], and gpu_seconds is what the
//     ledger counted;
//   - best fit keeps hosts whole: a 1-task gpu[num=N] job takes, of the hosts that could
//     take it, one with the fewest free devices (docs/gpus.md).
// Random clusters mix hosts known by count with hosts listing devices (models, memory, NUMA
// nodes, NVLink pairs); workloads mix gpu[] keys, rusage[gpu], multi-host jobs, requests no
// host can meet, cancels, run limits and priority preemption.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/model/cluster_state.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "testing/string_log.h"

namespace sluice::sim {
namespace {

struct Scenario {
  core::ClusterConfig config;
  Workload workload;
  bool kill_at_limit = false;
};

class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  int64_t operator()(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  std::mt19937_64 rng_;
};

// `count` devices of one model in two NUMA nodes, linked in pairs (0-1, 2-3, ...) or not.
std::vector<core::GpuDevice> DeviceList(int32_t count, Draw& draw) {
  const bool a100 = draw(0, 1) == 0;
  const bool linked = draw(0, 1) == 0;
  std::vector<core::GpuDevice> devices;
  for (int32_t i = 0; i < count; ++i) {
    core::GpuDevice gpu{.index = i,
                        .model = a100 ? "A100" : "V100",
                        .memory_mb = a100 ? 40000 : 16000,
                        .numa = i < (count + 1) / 2 ? 0 : 1};
    if (linked && (i ^ 1) < count) gpu.nvlink = {i ^ 1};
    devices.push_back(std::move(gpu));
  }
  return devices;
}

// `plain`: hosts known by count, one fifo queue, 1-task gpu[num=N] jobs only (the best-fit
// check); otherwise everything the header lists.
Scenario RandomScenario(uint64_t seed, bool plain) {
  Draw draw(seed);
  Scenario s;
  const int hosts = static_cast<int>(draw(1, 5));
  for (int h = 0; h < hosts; ++h) {
    core::HostSpec host;
    host.name = "g" + std::to_string(h + 1);
    host.slots = static_cast<int32_t>(draw(plain ? 8 : 2, 16));
    // The first host always has some: rusage[gpu] names a resource the cluster must know.
    const int32_t gpus = static_cast<int32_t>(draw(plain || h == 0 ? 1 : 0, 8));
    if (!plain && gpus > 0 && draw(0, 1) == 0) {
      host.gpus = DeviceList(gpus, draw);
    } else if (gpus > 0) {
      host.resources["gpu"] = gpus;
    }
    s.config.hosts.push_back(std::move(host));
  }
  if (plain) {
    s.config.queues.push_back(core::QueueSpec{.name = "normal"});
  } else {
    s.config.queues.push_back(core::QueueSpec{.name = "high",
                                              .priority = 10,
                                              .policy = core::PolicyKind::kEasyBackfill,
                                              .preemptive = true});
    s.config.queues.push_back(core::QueueSpec{
        .name = "low", .policy = core::PolicyKind::kEasyBackfill, .preemptable = true});
  }
  static constexpr const char* kRequests[] = {"",
                                              "gpu[num=1]",
                                              "gpu[num=2]",
                                              "gpu[num=4]",
                                              "gpu[num=1/task]",
                                              "gpu[num=2:glink=yes]",
                                              "gpu[num=1:gmodel=A100]",
                                              "gpu[num=2:gmodel=V100:aff=yes]",
                                              "gpu[num=1:gmem=20G]",
                                              "rusage[gpu=1]",
                                              "span[ptile=1] gpu[num=1]",
                                              "gpu[num=9]",
                                              "gpu[num=1:mode=shared:gmem=10G]",
                                              "gpu[num=2:mode=shared:gmem=6G]",
                                              "gpu[num=1/task:mode=shared:gmem=15G]"};
  constexpr int kRequestCount = sizeof(kRequests) / sizeof(kRequests[0]);
  const int jobs = static_cast<int>(draw(1, 60));
  Instant t = 0;
  for (int i = 0; i < jobs; ++i) {
    WorkloadJob job;
    job.spec.id = i + 1;
    job.line = i + 1;
    t += draw(0, 2) == 0 ? 0 : draw(1, 40);  // many ties
    job.spec.submit_time = t;
    job.runtime = draw(0, 6) == 0 ? 0 : draw(1, 200);
    if (plain) {
      job.spec.resreq = "gpu[num=" + std::to_string(draw(1, 4)) + "]";
    } else {
      job.spec.resreq = kRequests[draw(0, kRequestCount - 1)];
      job.spec.min_tasks = job.spec.max_tasks = static_cast<int32_t>(draw(1, 3));
      job.spec.queue = draw(0, 2) == 0 ? "high" : "low";
      if (draw(0, 3) == 0) job.spec.run_limit = std::max<Duration>(1, job.runtime - 20);
      if (draw(0, 7) == 0) job.cancel_at = t + draw(0, 150);
    }
    s.workload.jobs.push_back(std::move(job));
  }
  s.kill_at_limit = !plain && draw(0, 1) == 0;
  return s;
}

// The devices each job holds, host by host, from the replay's own reports: a device taken
// while another job holds it whole, shared past its memory, or given back while free, is a
// failure. Device-seconds integrate the devices held (a shared one once, whatever its sharers).
class GpuLedger final : public DecisionSink {
 public:
  explicit GpuLedger(const core::Topology& topology) : hosts_(topology.hosts().size()) {
    for (const core::Host& host : topology.hosts()) {
      hosts_[host.index].devices = host.devices.all;
      for (int i = 0; i < core::kMaxGpusPerHost; ++i) {
        hosts_[host.index].memory[static_cast<size_t>(i)] = host.devices.MemoryOf(i);
      }
    }
  }

  void OnStart(Instant t, const core::Job& job, const core::ClusterState& /*state*/) override {
    AdvanceTo(t);
    for (const core::HostGrant& grant : job.allocation.hosts) {
      HostLedger& host = hosts_[grant.host];
      EXPECT_EQ(grant.gpus & ~host.devices, 0u) << "job " << job.spec.id;
      EXPECT_EQ(grant.gpus & host.whole, 0u)
          << "job " << job.spec.id << " takes a device held whole at t=" << t;
      if (grant.gpu_mem_mb == 0) {
        EXPECT_EQ(grant.gpus & host.Shared(), 0u)
            << "job " << job.spec.id << " takes a shared device whole at t=" << t;
        host.whole |= grant.gpus;
      }
      ForEachDevice(grant, [&](size_t i) {
        host.reserved[i] += grant.gpu_mem_mb;
        EXPECT_LE(host.reserved[i], host.memory[i])
            << "job " << job.spec.id << " shares device " << i << " past its memory";
      });
    }
    runs_[job.spec.id] = job.allocation;
  }
  void OnFinish(Instant t, const core::Job& job) override { Release(t, job.spec.id); }
  void OnExit(Instant /*t*/, JobId job, core::ExitCause /*cause*/,
              const std::string& /*message*/) override {
    EXPECT_FALSE(runs_.contains(job)) << "job " << job << " failed while running";
  }
  void OnCancel(Instant t, JobId job) override { cut_short_ += Release(t, job); }
  void OnPreempt(Instant t, JobId job, JobId /*for_job*/) override {
    cut_short_ += Release(t, job);
  }

  uint64_t whole(HostIndex h) const { return hosts_[h].whole; }
  uint64_t shared(HostIndex h) const { return hosts_[h].Shared(); }
  int64_t reserved(HostIndex h, int i) const { return hosts_[h].reserved[static_cast<size_t>(i)]; }
  int64_t device_seconds() const { return device_seconds_; }
  // Runs with devices that a cancel or a preemption ended (the other paths that free them).
  int64_t cut_short() const { return cut_short_; }
  int64_t shared_grants() const { return shared_grants_; }

 private:
  struct HostLedger {
    uint64_t devices = 0;
    uint64_t whole = 0;
    std::array<int64_t, core::kMaxGpusPerHost> memory{};
    std::array<int64_t, core::kMaxGpusPerHost> reserved{};  // by shared grants

    uint64_t Shared() const {
      uint64_t mask = 0;
      for (size_t i = 0; i < reserved.size(); ++i) mask |= uint64_t{reserved[i] > 0} << i;
      return mask;
    }
    int64_t Held() const { return __builtin_popcountll(whole | Shared()); }
  };
  template <typename Fn>
  static void ForEachDevice(const core::HostGrant& grant, Fn&& fn) {
    for (uint64_t rest = grant.gpus; rest != 0; rest &= rest - 1) {
      fn(static_cast<size_t>(__builtin_ctzll(rest)));
    }
  }
  void AdvanceTo(Instant t) {
    int64_t held = 0;
    for (const HostLedger& host : hosts_) held += host.Held();
    if (held > 0) device_seconds_ += held * (t - last_);
    last_ = t;
  }
  // Whether the job held devices.
  bool Release(Instant t, JobId id) {
    auto it = runs_.find(id);
    if (it == runs_.end()) return false;  // a pending job cancelled
    AdvanceTo(t);
    bool had_devices = false;
    for (const core::HostGrant& grant : it->second.hosts) {
      HostLedger& host = hosts_[grant.host];
      if (grant.gpu_mem_mb == 0) {
        EXPECT_EQ(grant.gpus & ~host.whole, 0u) << "job " << id << " gives back free devices";
        host.whole &= ~grant.gpus;
      } else {
        ++shared_grants_;
      }
      ForEachDevice(grant, [&](size_t i) {
        host.reserved[i] -= grant.gpu_mem_mb;
        EXPECT_GE(host.reserved[i], 0) << "job " << id << " gives back memory it did not hold";
      });
      had_devices = had_devices || grant.gpus != 0;
    }
    runs_.erase(it);
    return had_devices;
  }

  std::vector<HostLedger> hosts_;  // by host
  std::map<JobId, core::Allocation> runs_;
  Instant last_ = 0;
  int64_t device_seconds_ = 0;
  int64_t cut_short_ = 0;
  int64_t shared_grants_ = 0;
};

// After a cycle: the ledger and the core agree on every host's held devices and shared
// memory, and a grant's `gpu` resource counts its devices held whole (shared ones: none).
void CheckHeldDevices(const core::ClusterState& state, const GpuLedger& ledger) {
  const std::optional<ResourceId> gpu = state.topology().FindHostResource("gpu");
  for (const core::Host& host : state.topology().hosts()) {
    ASSERT_EQ(ledger.whole(host.index), host.gpus_used) << host.spec.name;
    ASSERT_EQ(ledger.shared(host.index), host.gpus_shared) << host.spec.name;
    for (int i = 0; i < core::kMaxGpusPerHost; ++i) {
      ASSERT_EQ(ledger.reserved(host.index, i), host.GpuMemShared(i)) << host.spec.name << " " << i;
    }
  }
  for (const core::RunningEntry& entry : state.running()) {
    for (const core::HostGrant& grant : entry.job->allocation.hosts) {
      int64_t counted = 0;
      for (const core::ResourceAmount& r : grant.resources) {
        if (gpu && r.id == *gpu) counted = r.amount;
      }
      ASSERT_EQ(counted, grant.gpu_mem_mb > 0 ? 0 : __builtin_popcountll(grant.gpus))
          << "job " << entry.job->spec.id;
    }
  }
}

// Best fit (plain scenarios): the cycle's starts, undone and replayed in decision order, each
// took a host with the fewest free devices among those with enough of them and a free slot,
// the first such in host order.
// Returns how many of them had a better host than the first that fits (best fit mattered).
int64_t CheckBestFit(const core::ClusterState& state, const core::CycleResult& cycle) {
  const std::vector<core::Host>& hosts = state.topology().hosts();
  std::vector<uint64_t> free(hosts.size());
  std::vector<int32_t> free_slots(hosts.size());
  for (const core::Host& host : hosts) {
    free[host.index] = host.devices.all & ~host.gpus_used;
    free_slots[host.index] = host.FreeSlots();
  }
  std::vector<const core::Job*> started;
  for (const core::Decision& d : cycle.decisions) {
    if (const auto* start = std::get_if<core::StartJob>(&d)) {
      started.push_back(state.FindJob(start->job));
      for (const core::HostGrant& grant : started.back()->allocation.hosts) {
        free[grant.host] |= grant.gpus;
        free_slots[grant.host] += grant.slots;
      }
    }
  }
  int64_t mattered = 0;
  for (const core::Job* job : started) {
    EXPECT_EQ(job->allocation.hosts.size(), 1u);
    const core::HostGrant& grant = job->allocation.hosts[0];
    const int32_t needed = __builtin_popcountll(grant.gpus);
    std::optional<HostIndex> first;
    std::optional<HostIndex> best;
    for (HostIndex h = 0; h < hosts.size(); ++h) {
      if (__builtin_popcountll(free[h]) < needed || free_slots[h] < 1) continue;
      if (!first) first = h;
      if (!best || __builtin_popcountll(free[h]) < __builtin_popcountll(free[*best])) best = h;
    }
    EXPECT_EQ(std::optional<HostIndex>(grant.host), best) << "job " << job->spec.id;
    mattered += first != best;
    free[grant.host] &= ~grant.gpus;
    free_slots[grant.host] -= grant.slots;
  }
  return mattered;
}

struct Replayed {
  std::string log;
  GpuTotals gpus;
};

Replayed Replay(const Scenario& s) {
  Result<core::ClusterState> state = core::ClusterState::Create(s.config);
  SLUICE_CHECK(state.has_value());
  testing::StringLog log;
  Simulator simulator(std::move(*state), s.workload, SimOptions{.kill_at_limit = s.kill_at_limit});
  Result<SimResult> result = simulator.Run(log.log());
  SLUICE_CHECK(result.has_value());
  return Replayed{.log = log.Text(), .gpus = result->gpus};
}

TEST(GpuReplayPropertyTest, NoDeviceHeldTwiceAndMetricsInRange) {
  int64_t gpu_runs = 0;
  int64_t cut_short = 0;
  int64_t shared_grants = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Scenario s = RandomScenario(seed, /*plain=*/false);
    Result<core::ClusterState> state = core::ClusterState::Create(s.config);
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    GpuLedger ledger(state->topology());
    SimOptions options{.kill_at_limit = s.kill_at_limit};
    options.after_cycle = [&](const core::ClusterState& now, Instant, const core::CycleResult&) {
      CheckHeldDevices(now, ledger);
    };
    Simulator simulator(std::move(*state), s.workload, std::move(options));
    Result<SimResult> result = simulator.Run(&ledger);
    ASSERT_TRUE(result.has_value()) << result.error().ToString();
    const Metrics m = ComputeMetrics(*result, simulator.state().topology().total_slots(), 0);
    EXPECT_EQ(m.gpu_seconds, ledger.device_seconds());
    EXPECT_GE(m.gpu_utilization, 0);
    EXPECT_LE(m.gpu_utilization, 1);
    EXPECT_GE(m.gpu_fragmentation, 0);
    EXPECT_LE(m.gpu_fragmentation, 1);
    for (HostIndex h = 0; h < s.config.hosts.size(); ++h) {
      EXPECT_EQ(ledger.whole(h) | ledger.shared(h), 0u) << "devices held after the run";
    }
    gpu_runs += ledger.device_seconds() > 0;
    cut_short += ledger.cut_short();
    shared_grants += ledger.shared_grants();
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(gpu_runs, 250);   // most runs do hold devices
  EXPECT_GT(cut_short, 400);  // and cancels and preemptions free them
  EXPECT_GT(shared_grants, 200);  // and devices are shared
}

TEST(GpuReplayPropertyTest, SameInputSameBytesEvenWhenShuffled) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Scenario s = RandomScenario(seed, /*plain=*/false);
    const Replayed first = Replay(s);
    const Replayed again = Replay(s);
    EXPECT_EQ(first.log, again.log);
    EXPECT_EQ(first.gpus.held_seconds, again.gpus.held_seconds);
    EXPECT_EQ(first.gpus.stranded_seconds, again.gpus.stranded_seconds);
    Scenario shuffled = s;
    std::mt19937_64 rng(seed);
    std::shuffle(shuffled.workload.jobs.begin(), shuffled.workload.jobs.end(), rng);
    const Replayed other = Replay(shuffled);
    EXPECT_EQ(first.log, other.log);
    EXPECT_EQ(first.gpus.stranded_seconds, other.gpus.stranded_seconds);
  }
}

TEST(GpuReplayPropertyTest, BestFitKeepsHostsWhole) {
  int64_t mattered = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Scenario s = RandomScenario(seed, /*plain=*/true);
    Result<core::ClusterState> state = core::ClusterState::Create(s.config);
    ASSERT_TRUE(state.has_value()) << state.error().ToString();
    SimOptions options;
    options.after_cycle = [&](const core::ClusterState& now, Instant,
                              const core::CycleResult& cycle) {
      mattered += CheckBestFit(now, cycle);
    };
    Simulator simulator(std::move(*state), s.workload, std::move(options));
    ASSERT_TRUE(simulator.Run(nullptr).has_value());
    if (HasFailure()) return;
  }
  EXPECT_GT(mattered, 500);  // the first host that fits was often not the best
}

}  // namespace
}  // namespace sluice::sim
