// Property tests on seeded random workloads and clusters (STYLE.md "Property tests"): the
// invariants below are checked after every cycle of a full simulation. The seed is printed
// on failure (SCOPED_TRACE).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/admission/eligibility.h"
#include "core/cycle/scheduler.h"
#include "sim/decision_log.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "testing/builders.h"
#include "testing/string_log.h"

namespace sluice::sim {
namespace {

struct Scenario {
  core::ClusterConfig config;
  Workload workload;
};

// With `eligibility`, jobs are also held (some released later), wait for begin times and
// for random dependencies on earlier jobs, the queue may have a dispatch window, and a closed
// queue refuses some submissions (R-Q-1, R-Q-3).
// Holds, begin times, dependencies on earlier jobs and submissions to the closed queue.
template <typename Uniform>
void AddEligibility(WorkloadJob& job, int index, Uniform& uniform) {
  if (uniform(0, 9) == 0) {
    job.spec.hold = true;
    if (uniform(0, 1) == 0) job.release_at = job.spec.submit_time + uniform(0, 300);
  }
  if (uniform(0, 9) == 0) job.spec.begin_time = job.spec.submit_time + uniform(0, 200);
  if (index > 0 && uniform(0, 4) == 0) {
    static constexpr const char* kOps[] = {"done", "exit", "ended", "started"};
    auto atom = [&] {
      return std::string(kOps[uniform(0, 3)]) + "(" + std::to_string(uniform(1, index)) + ")";
    };
    job.spec.depend =
        uniform(0, 2) == 0 ? atom() : atom() + (uniform(0, 1) ? " && " : " || !") + atom();
  }
  if (uniform(0, 19) == 0) job.spec.queue = "closed";
}

Scenario RandomScenario(uint64_t seed, core::PolicyKind policy, bool allow_closed = true,
                        bool eligibility = false) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  Scenario s;
  const int hosts = static_cast<int>(uniform(1, 8));
  int64_t total = 0;
  for (int h = 0; h < hosts; ++h) {
    core::HostSpec host;
    host.name = "h" + std::to_string(h);
    host.slots = static_cast<int32_t>(uniform(1, 4));
    if (allow_closed && uniform(0, 9) == 0) host.state = core::HostState::kClosed;  // capacity
    total += host.slots;
    s.config.hosts.push_back(host);
  }
  s.config.queues.push_back(core::QueueSpec{.name = "normal",
                                            .policy = policy,
                                            .max_bypass = static_cast<int32_t>(uniform(0, 4)),
                                            .max_head_wait = uniform(0, 300)});
  const int jobs = static_cast<int>(uniform(1, 80));
  Instant t = 0;
  for (int i = 0; i < jobs; ++i) {
    WorkloadJob job;
    job.spec.id = i + 1;
    job.spec.user = "u" + std::to_string(uniform(1, 3));
    t += uniform(0, 3) == 0 ? 0 : uniform(0, 30);  // many ties
    job.spec.submit_time = t;
    const int32_t tasks = static_cast<int32_t>(uniform(1, total + (uniform(0, 15) == 0 ? 2 : 0)));
    job.spec.min_tasks = job.spec.max_tasks = tasks;
    if (uniform(0, 6) == 0) job.spec.min_tasks = static_cast<int32_t>(uniform(1, tasks));
    job.runtime = uniform(0, 5) == 0 ? 0 : uniform(1, 200);
    switch (uniform(0, 3)) {
      case 0:
        break;  // no run limit
      case 1:
        job.spec.run_limit = std::max<Duration>(1, job.runtime / 2);  // overruns
        break;
      default:
        job.spec.run_limit = job.runtime + uniform(0, 100);
    }
    job.line = i + 1;
    if (eligibility) AddEligibility(job, i, uniform);
    s.workload.jobs.push_back(job);
  }
  if (eligibility && uniform(0, 3) == 0) {  // a window of 5-30 minutes within the first hour
    const int64_t start = uniform(0, 30);
    const int64_t end = start + uniform(5, 29);
    auto minutes = [](int64_t m) {
      return std::string(m < 10 ? "00:0" : "00:") + std::to_string(m);
    };
    s.config.queues[0].windows = {minutes(start) + "-" + minutes(end)};
  }
  if (eligibility) s.config.queues.push_back(core::QueueSpec{.name = "closed", .open = false});
  return s;
}

using testing::StringLog;

std::string RunToLog(const Scenario& s, SimOptions options) {
  Result<core::ClusterState> state = core::ClusterState::Create(s.config);
  SLUICE_CHECK(state.has_value());
  StringLog log;
  Simulator simulator(std::move(*state), s.workload, std::move(options));
  Result<SimResult> result = simulator.Run(log.log());
  SLUICE_CHECK(result.has_value());
  return log.Text();
}

// Independent of the core's reservation code: the earliest time at which `needed` slots
// are free if every running job ends at max(start + limit, now) and no job ends otherwise.
Instant EarliestStart(int64_t needed, int64_t free_now, Instant now,
                      const std::vector<std::pair<Instant, int64_t>>& ends) {
  std::map<Instant, int64_t> released;
  for (auto [end, slots] : ends) {
    if (end != kInfinite) released[std::max(end, now)] += slots;
  }
  if (free_now >= needed) return now;
  int64_t free = free_now;
  for (auto [time, slots] : released) {
    free += slots;
    if (free >= needed) return time;
  }
  return kInfinite;
}

void CheckCycle(const core::ClusterState& state, Instant now, const core::CycleResult& cycle,
                core::PolicyKind policy) {
  // 1. No slot double-booked: each host's grants add up to its used slots, within its size.
  std::vector<int64_t> granted(state.topology().hosts().size(), 0);
  for (const core::RunningEntry& entry : state.running()) {
    for (const core::HostGrant& grant : entry.job->allocation.hosts)
      granted[grant.host] += grant.slots;
  }
  int64_t used = 0;
  for (const core::Host& host : state.topology().hosts()) {
    ASSERT_EQ(granted[host.index], host.used_slots) << host.spec.name;
    ASSERT_LE(host.used_slots, host.spec.slots) << host.spec.name;
    used += host.used_slots;
  }
  // 2. Capacity never exceeded.
  ASSERT_LE(used, state.topology().total_slots());
  ASSERT_EQ(state.topology().free_slots(), [&] {
    int64_t free = 0;
    for (const core::Host& host : state.topology().hosts())
      free += host.AcceptsWork() ? host.FreeSlots() : 0;
    return free;
  }());
  // 3. Every pending job has a reason, exactly once.
  std::set<JobId> pending;
  for (const core::Queue& queue : state.topology().queues()) {
    for (const core::PendingEntry& entry : queue.pending) pending.insert(entry.job->spec.id);
  }
  std::set<JobId> explained;
  for (const core::Decision& d : cycle.decisions) {
    if (const auto* pend = std::get_if<core::PendJob>(&d)) {
      ASSERT_FALSE(pend->reasons.empty()) << "job " << pend->job;
      ASSERT_TRUE(explained.insert(pend->job).second) << "job " << pend->job << " twice";
    }
  }
  ASSERT_EQ(pending, explained);
  // 4. EASY: backfilled jobs never delay the head's earliest start.
  if (policy != core::PolicyKind::kEasyBackfill || state.topology().queues()[0].pending.empty())
    return;
  std::set<JobId> backfilled;
  for (const core::Decision& d : cycle.decisions) {
    if (const auto* start = std::get_if<core::StartJob>(&d); start && start->backfilled) {
      backfilled.insert(start->job);
    }
  }
  if (backfilled.empty()) return;
  // The head is the first job that could be tried (held, waiting or windowed jobs are
  // skipped, never heads). A dependency may have been satisfied by this very cycle's starts,
  // so a head with one is not judged.
  const core::Job* first = nullptr;
  for (const core::PendingEntry& entry : state.topology().queues()[0].pending) {
    if (core::IsEligible(*entry.job, state, now)) {
      first = entry.job;
      break;
    }
  }
  if (first == nullptr || !first->spec.depend.empty()) return;
  const core::Job& head = *first;
  std::vector<std::pair<Instant, int64_t>> with, without;
  int64_t freed = 0;
  for (const core::RunningEntry& entry : state.running()) {
    const core::Job& job = *entry.job;
    const int64_t slots = job.allocation.TotalSlots();
    with.emplace_back(job.EstimatedEnd(), slots);
    if (backfilled.contains(job.spec.id)) {
      freed += slots;
    } else {
      without.emplace_back(job.EstimatedEnd(), slots);
    }
  }
  const int64_t free_now = state.topology().free_slots();
  const Instant with_backfill = EarliestStart(head.spec.min_tasks, free_now, now, with);
  const Instant without_backfill =
      EarliestStart(head.spec.min_tasks, free_now + freed, now, without);
  ASSERT_LE(with_backfill, without_backfill) << "backfill delayed head " << head.spec.id;
}

class SimPropertyTest : public ::testing::TestWithParam<core::PolicyKind> {};

TEST_P(SimPropertyTest, InvariantsHoldAfterEveryCycle) {
  const core::PolicyKind policy = GetParam();
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Scenario s = RandomScenario(seed, policy);
    int64_t cycles = 0;
    SimOptions options;
    options.explain_every_cycle = true;
    options.after_cycle = [&](const core::ClusterState& state, Instant now,
                              const core::CycleResult& cycle) {
      ++cycles;
      CheckCycle(state, now, cycle, policy);
    };
    RunToLog(s, std::move(options));
    ASSERT_GT(cycles, 0);
    if (HasFatalFailure()) return;
  }
}

// The same with holds, dependencies, begin times, windows and a closed queue: every pending
// job still has a reason after every cycle, and every run ends.
TEST_P(SimPropertyTest, InvariantsHoldWithEligibilityMechanisms) {
  const core::PolicyKind policy = GetParam();
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Scenario s = RandomScenario(seed, policy, /*allow_closed=*/true, /*eligibility=*/true);
    SimOptions options;
    options.explain_every_cycle = true;
    options.after_cycle = [&](const core::ClusterState& state, Instant now,
                              const core::CycleResult& cycle) {
      CheckCycle(state, now, cycle, policy);
    };
    const std::string log = RunToLog(s, std::move(options));
    EXPECT_EQ(log, RunToLog(s, {}));  // explaining changes nothing
    if (HasFatalFailure()) return;
  }
}

TEST_P(SimPropertyTest, SameInputSameBytesEvenWhenShuffledOrExplained) {
  const core::PolicyKind policy = GetParam();
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Scenario s = RandomScenario(seed, policy);
    const std::string first = RunToLog(s, {});
    EXPECT_EQ(first, RunToLog(s, {}));
    SimOptions explain;
    explain.explain_every_cycle = true;
    EXPECT_EQ(first, RunToLog(s, std::move(explain)));
    Scenario shuffled = s;
    std::mt19937_64 rng(seed);
    std::shuffle(shuffled.workload.jobs.begin(), shuffled.workload.jobs.end(), rng);
    EXPECT_EQ(first, RunToLog(shuffled, {}));
  }
}

TEST_P(SimPropertyTest, EveryFeasibleJobEventuallyRunsOrFailsAtOnce) {
  const core::PolicyKind policy = GetParam();
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Scenario s = RandomScenario(seed, policy);
    Result<core::ClusterState> state = core::ClusterState::Create(s.config);
    ASSERT_TRUE(state.has_value());
    const int64_t total = state->topology().total_slots();
    int64_t usable = 0;
    for (const core::Host& host : state->topology().hosts())
      usable += host.AcceptsWork() ? host.spec.slots : 0;
    Simulator simulator(std::move(*state), s.workload, {});
    Result<SimResult> result = simulator.Run(nullptr);
    ASSERT_TRUE(result.has_value());
    for (size_t i = 0; i < result->records.size(); ++i) {
      const JobRecord& record = result->records[i];
      const int32_t min_tasks = s.workload.jobs[i].spec.min_tasks;
      if (min_tasks > total) {
        EXPECT_EQ(record.cause, core::ExitCause::kUnschedulable) << "job " << record.id;
        EXPECT_EQ(record.end, record.submit) << "job " << record.id << " not failed promptly";
      } else if (usable == total) {
        // (With a closed host, a job that needs it waits for ever — and under fifo, so does
        // everything behind it; that is the spec, so liveness is checked only without one.)
        EXPECT_GE(record.start, record.submit)
            << "job " << record.id << " never started, cause " << core::ToString(record.cause)
            << ", min " << min_tasks << ", usable " << usable;
        EXPECT_EQ(record.state, core::JobState::kDone) << "job " << record.id;
      }
    }
  }
}

// R-ADM-2's promise, checked on random single-queue workloads without holds, priorities or
// closed hosts: once a head's gate activates, the head starts no later than the moment every
// job running then has finished (by its actual runtime).
TEST(BoundedBackfillPropertyTest, AGatedHeadStartsOnceTheJobsRunningAtItsGateHaveEnded) {
  int64_t gates = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Scenario s = RandomScenario(seed, core::PolicyKind::kBoundedBackfill, /*allow_closed=*/false);
    std::map<JobId, Duration> runtime;
    for (const WorkloadJob& job : s.workload.jobs) runtime[job.spec.id] = job.runtime;
    std::map<JobId, Instant> bound;  // head -> latest end of the jobs running at its gate
    SimOptions options;
    options.after_cycle = [&](const core::ClusterState& state, Instant now,
                              const core::CycleResult& cycle) {
      for (const core::Decision& d : cycle.decisions) {
        const auto* update = std::get_if<core::UpdateAdmission>(&d);
        if (update == nullptr || update->gate_since != now || bound.contains(update->job)) continue;
        Instant latest = now;
        for (const core::RunningEntry& entry : state.running()) {
          latest = std::max(latest, entry.job->start_time + runtime[entry.job->spec.id]);
        }
        bound[update->job] = latest;
      }
    };
    Result<core::ClusterState> state = core::ClusterState::Create(s.config);
    ASSERT_TRUE(state.has_value());
    Simulator simulator(std::move(*state), s.workload, std::move(options));
    Result<SimResult> result = simulator.Run(nullptr);
    ASSERT_TRUE(result.has_value());
    for (const JobRecord& record : result->records) {
      auto it = bound.find(record.id);
      if (it == bound.end()) continue;
      ++gates;
      EXPECT_GE(record.start, 0) << "gated head " << record.id << " never started";
      EXPECT_LE(record.start, it->second) << "gated head " << record.id << " started late";
    }
  }
  EXPECT_GT(gates, 50);  // the workloads do gate heads
}

INSTANTIATE_TEST_SUITE_P(Policies, SimPropertyTest,
                         ::testing::Values(core::PolicyKind::kFifo, core::PolicyKind::kEasyBackfill,
                                           core::PolicyKind::kBoundedBackfill),
                         [](const ::testing::TestParamInfo<core::PolicyKind>& param) {
                           return std::string(core::ToString(param.param));
                         });

}  // namespace
}  // namespace sluice::sim
