// Job arrays obey every rule a plain job obeys (R-UX-3), on seeded random workloads (the seed
// is printed on failure):
//  - an array `1-n` schedules exactly as n plain jobs with the same spec submitted in its
//    place (same starts, ends and slots, under every policy): elements are jobs;
//  - with a `%N` cap, after every cycle: no slot double-booked, capacity never exceeded,
//    every pending Job explained once, at most N elements of an array running, elements
//    starting in index order; every element of a feasible array eventually runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "base/array_ids.h"
#include "core/cycle/scheduler.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace sluice::sim {
namespace {

struct Scenario {
  core::ClusterConfig config;
  Workload workload;
};

struct ArrayOfJob {
  JobId array = kNoJob;  // kNoJob: a plain job
  int32_t size = 0;
};

// Random hosts and jobs; about one job in four is an array of 1-12 elements (capped when
// `caps`).
Scenario RandomScenario(uint64_t seed, core::PolicyKind policy, bool caps) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  Scenario s;
  int64_t total = 0;
  for (int h = 0, hosts = static_cast<int>(uniform(1, 6)); h < hosts; ++h) {
    core::HostSpec host;
    host.name = "h" + std::to_string(h);
    host.slots = static_cast<int32_t>(uniform(1, 4));
    total += host.slots;
    s.config.hosts.push_back(host);
  }
  s.config.queues.push_back(core::QueueSpec{.name = "normal", .policy = policy});
  Instant t = 0;
  for (int i = 0, jobs = static_cast<int>(uniform(1, 30)); i < jobs; ++i) {
    WorkloadJob job;
    job.spec.id = i + 1;
    job.spec.user = "u" + std::to_string(uniform(1, 3));
    t += uniform(0, 2) == 0 ? 0 : uniform(0, 30);
    job.spec.submit_time = t;
    const auto tasks = static_cast<int32_t>(uniform(1, total));
    job.spec.min_tasks = job.spec.max_tasks = tasks;
    job.runtime = uniform(1, 100);
    if (uniform(0, 2) != 0) job.spec.run_limit = job.runtime + uniform(0, 50);
    if (uniform(0, 3) == 0) {
      job.array = "1-" + std::to_string(uniform(1, 12));
      if (caps && uniform(0, 1) == 0) job.array += "%" + std::to_string(uniform(1, 3));
    }
    job.line = i + 1;
    s.workload.jobs.push_back(job);
  }
  return s;
}

// The same workload with each array `1-n` replaced by n plain jobs in its place; `plain_of`
// maps each element id to its plain job's id.
Scenario Expand(const Scenario& s, std::map<JobId, JobId>& plain_of) {
  Scenario out{.config = s.config, .workload = {}};
  JobId next = 1;
  for (const WorkloadJob& job : s.workload.jobs) {
    if (job.array.empty()) {
      WorkloadJob copy = job;
      copy.spec.id = next++;
      plain_of[job.spec.id] = copy.spec.id;
      out.workload.jobs.push_back(copy);
      continue;
    }
    const int32_t n = std::stoi(job.array.substr(2));
    for (int32_t index = 1; index <= n; ++index) {
      WorkloadJob copy = job;
      copy.array.clear();
      copy.spec.id = next++;
      plain_of[ArrayElementId(job.spec.id, index)] = copy.spec.id;
      out.workload.jobs.push_back(copy);
    }
  }
  return out;
}

SimResult RunScenario(const Scenario& s, SimOptions options = {}) {
  Result<core::ClusterState> state = core::ClusterState::Create(s.config);
  SLUICE_CHECK(state.has_value());
  Simulator simulator(std::move(*state), s.workload, std::move(options));
  Result<SimResult> result = simulator.Run(nullptr);
  SLUICE_CHECK(result.has_value());
  return std::move(*result);
}

class ArrayPropertyTest : public ::testing::TestWithParam<core::PolicyKind> {};

TEST_P(ArrayPropertyTest, AnArraySchedulesAsTheSamePlainJobsInItsPlace) {
  int64_t elements = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Scenario arrays = RandomScenario(seed, GetParam(), /*caps=*/false);
    std::map<JobId, JobId> plain_of;
    const Scenario plain = Expand(arrays, plain_of);
    const SimResult a = RunScenario(arrays);
    const SimResult p = RunScenario(plain);
    std::map<JobId, const JobRecord*> by_id;
    for (const JobRecord& record : p.records) by_id[record.id] = &record;
    for (const JobRecord& record : a.records) {
      if (record.is_array) continue;
      elements += IsArrayElement(record.id);
      const JobRecord& twin = *by_id.at(plain_of.at(record.id));
      ASSERT_EQ(record.start, twin.start) << FormatJobId(record.id);
      ASSERT_EQ(record.end, twin.end) << FormatJobId(record.id);
      ASSERT_EQ(record.slots, twin.slots) << FormatJobId(record.id);
      ASSERT_EQ(record.state, twin.state) << FormatJobId(record.id);
    }
  }
  EXPECT_GT(elements, 500);
}

TEST_P(ArrayPropertyTest, CappedArraysKeepEveryInvariantAfterEveryCycle) {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Scenario s = RandomScenario(seed, GetParam(), /*caps=*/true);
    std::map<JobId, Instant> last_start;  // by array: elements start in index order
    SimOptions options;
    options.explain_every_cycle = true;
    options.after_cycle = [&](const core::ClusterState& state, Instant now,
                              const core::CycleResult& cycle) {
      std::vector<int64_t> granted(state.topology().hosts().size(), 0);
      std::map<JobId, int64_t> running_by_array;
      for (const core::RunningEntry& entry : state.running()) {
        for (const core::HostGrant& g : entry.job->allocation.hosts) granted[g.host] += g.slots;
        if (IsArrayElement(entry.job->spec.id)) ++running_by_array[ArrayIdOf(entry.job->spec.id)];
      }
      for (const core::Host& host : state.topology().hosts()) {
        ASSERT_EQ(granted[host.index], host.used_slots);
        ASSERT_LE(host.used_slots, host.spec.slots);
      }
      for (const auto& [array, running] : running_by_array) {
        const int32_t cap = state.FindArray(array)->cap;
        if (cap > 0) {
          ASSERT_LE(running, cap) << "array " << array;
        }
      }
      std::map<JobId, int> explained;
      for (const core::Decision& d : cycle.decisions) {
        if (const auto* pend = std::get_if<core::PendJob>(&d)) {
          ASSERT_FALSE(pend->reasons.empty());
          ++explained[pend->job];
        }
        if (const auto* start = std::get_if<core::StartJob>(&d);
            start && IsArrayElement(start->job)) {
          const Instant before = last_start[ArrayIdOf(start->job)];
          ASSERT_LE(before, now);
          last_start[ArrayIdOf(start->job)] = now;
        }
      }
      for (const core::Queue& queue : state.topology().queues()) {
        for (const core::PendingEntry& entry : queue.pending) {
          ASSERT_EQ(explained[entry.job->spec.id], 1) << FormatJobId(entry.job->spec.id);
        }
      }
    };
    const SimResult result = RunScenario(s, std::move(options));
    std::map<JobId, std::vector<Instant>> starts;  // by array, in index order
    for (const JobRecord& record : result.records) {
      if (record.is_array) continue;
      EXPECT_GE(record.start, record.submit) << FormatJobId(record.id) << " never started";
      EXPECT_EQ(record.state, core::JobState::kDone) << FormatJobId(record.id);
      if (IsArrayElement(record.id)) starts[ArrayIdOf(record.id)].push_back(record.start);
    }
    for (const auto& [array, times] : starts) {
      EXPECT_TRUE(std::is_sorted(times.begin(), times.end())) << "array " << array;
    }
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, ArrayPropertyTest,
                         ::testing::Values(core::PolicyKind::kFifo, core::PolicyKind::kEasyBackfill,
                                           core::PolicyKind::kBoundedBackfill),
                         [](const ::testing::TestParamInfo<core::PolicyKind>& param) {
                           return std::string(core::ToString(param.param));
                         });

}  // namespace
}  // namespace sluice::sim
