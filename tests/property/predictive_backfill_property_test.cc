// Property tests of predictive_backfill (issue 20) on seeded random workloads, clusters and
// knobs; the seed is printed on failure (SCOPED_TRACE). After every cycle:
//  1. no job the cycle backfilled (started ahead of a blocked head) makes that head's
//     reservation computed from run limits later: the earliest time the head's slots are
//     free, with every running job ending at max(start + run limit, now), is no later with
//     the backfilled jobs running than without them (computed here, independently of the
//     core's reservation code);
//  2. every pending job has exactly one explanation with at least one reason;
// and the same input gives the same decision log twice.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/admission/eligibility.h"
#include "core/cycle/scheduler.h"
#include "sim/decision_log.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "testing/string_log.h"

namespace sluice::sim {
namespace {

struct Scenario {
  core::ClusterConfig config;
  Workload workload;
};

Scenario RandomScenario(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  Scenario s;
  const int hosts = static_cast<int>(uniform(1, 8));
  int64_t total = 0;
  for (int h = 0; h < hosts; ++h) {
    core::HostSpec host{.name = "h" + std::to_string(h),
                        .slots = static_cast<int32_t>(uniform(1, 4))};
    total += host.slots;
    s.config.hosts.push_back(host);
  }
  core::QueueSpec queue{.name = "normal", .policy = core::PolicyKind::kPredictiveBackfill};
  static constexpr core::BackfillOrder kOrders[] = {
      core::BackfillOrder::kQueue, core::BackfillOrder::kShortest, core::BackfillOrder::kExpansion};
  queue.predictive = core::PredictiveKnobs{.history_runs = static_cast<int32_t>(uniform(1, 4)),
                                           .order = kOrders[uniform(0, 2)],
                                           .reserve_after = uniform(0, 1) ? uniform(0, 300) : 0,
                                           .reserve_depth = static_cast<int32_t>(uniform(0, 3)),
                                           .predicted_guard = uniform(0, 1) == 1};
  s.config.queues.push_back(queue);
  const int jobs = static_cast<int>(uniform(1, 80));
  Instant t = 0;
  for (int i = 0; i < jobs; ++i) {
    WorkloadJob job;
    job.spec.id = i + 1;
    job.spec.user = "u" + std::to_string(uniform(1, 3));
    t += uniform(0, 3) == 0 ? 0 : uniform(0, 30);
    job.spec.submit_time = t;
    const int32_t tasks = static_cast<int32_t>(uniform(1, total));
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
        job.spec.run_limit = job.runtime + uniform(0, 300);
    }
    job.line = i + 1;
    s.workload.jobs.push_back(job);
  }
  return s;
}

// The earliest time `needed` slots are free if every running job ends at max(end, now).
Instant EarliestStart(int64_t needed, int64_t free_now, Instant now,
                      const std::vector<std::pair<Instant, int64_t>>& ends) {
  if (free_now >= needed) return now;
  std::map<Instant, int64_t> released;
  for (auto [end, slots] : ends) {
    if (end != kInfinite) released[std::max(end, now)] += slots;
  }
  int64_t free = free_now;
  for (auto [time, slots] : released) {
    free += slots;
    if (free >= needed) return time;
  }
  return kInfinite;
}

void CheckExplained(const core::ClusterState& state, const core::CycleResult& cycle) {
  std::set<JobId> pending;
  for (const core::PendingEntry& entry : state.queues()[0].pending)
    pending.insert(entry.job->spec.id);
  std::set<JobId> explained;
  for (const core::Decision& d : cycle.decisions) {
    if (const auto* pend = std::get_if<core::PendJob>(&d)) {
      ASSERT_FALSE(pend->reasons.empty()) << "job " << pend->job;
      ASSERT_TRUE(explained.insert(pend->job).second) << "job " << pend->job << " twice";
    }
  }
  ASSERT_EQ(pending, explained);
}

// Returns how many backfilled jobs were checked against a blocked head.
int CheckHeadNotDelayed(const core::ClusterState& state, Instant now,
                        const core::CycleResult& cycle) {
  std::set<JobId> backfilled;
  for (const core::Decision& d : cycle.decisions) {
    if (const auto* start = std::get_if<core::StartJob>(&d); start && start->backfilled) {
      backfilled.insert(start->job);
    }
  }
  const core::Job* head = nullptr;  // the first job that could be tried: the blocked head
  for (const core::PendingEntry& entry : state.queues()[0].pending) {
    if (core::IsEligible(*entry.job, state, now)) {
      head = entry.job;
      break;
    }
  }
  if (backfilled.empty() || head == nullptr) return 0;
  std::vector<std::pair<Instant, int64_t>> with, without;
  int64_t freed = 0;
  for (const core::RunningEntry& entry : state.running()) {
    const int64_t slots = entry.job->allocation.TotalSlots();
    with.emplace_back(entry.job->EstimatedEnd(), slots);
    if (backfilled.contains(entry.job->spec.id)) {
      freed += slots;
    } else {
      without.emplace_back(entry.job->EstimatedEnd(), slots);
    }
  }
  const int64_t free_now = state.free_slots();
  EXPECT_LE(EarliestStart(head->min_slots, free_now, now, with),
            EarliestStart(head->min_slots, free_now + freed, now, without))
      << "a backfill delayed head " << head->spec.id << " at t=" << now;
  return static_cast<int>(backfilled.size());
}

using testing::StringLog;

std::string ReplayScenario(const Scenario& s, SimOptions options) {
  Result<core::ClusterState> state = core::ClusterState::Create(s.config);
  SLUICE_CHECK(state.has_value());
  StringLog log;
  Simulator simulator(std::move(*state), s.workload, std::move(options));
  SLUICE_CHECK(simulator.Run(log.log()).has_value());
  return log.Text();
}

TEST(PredictiveBackfillPropertyTest, NoBackfillDelaysTheHeadsRunLimitReservation) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Scenario s = RandomScenario(seed);
    SimOptions options;
    options.explain_every_cycle = true;
    options.after_cycle = [&](const core::ClusterState& state, Instant now,
                              const core::CycleResult& cycle) {
      CheckExplained(state, cycle);
      checked += CheckHeadNotDelayed(state, now, cycle);
    };
    ReplayScenario(s, std::move(options));
    if (HasFailure()) return;
  }
  EXPECT_GT(checked, 500);  // the workloads do backfill ahead of blocked heads
}

TEST(PredictiveBackfillPropertyTest, SameInputSameBytesExplainedOrNot) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Scenario s = RandomScenario(seed);
    const std::string once = ReplayScenario(s, {});
    EXPECT_EQ(once, ReplayScenario(s, {}));
    SimOptions explained;
    explained.explain_every_cycle = true;
    EXPECT_EQ(once, ReplayScenario(s, std::move(explained)));
  }
}

}  // namespace
}  // namespace sluice::sim
