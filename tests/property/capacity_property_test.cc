// Property tests of capacity queues, limits, fairshare and preemption (issue 5) on seeded
// random multi-queue workloads, driven through the core directly so each cycle's decisions
// can be checked against the state they were made on:
//  - no queue ever runs above its maximum; no host above its slots;
//  - reclaim never takes a queue below its guarantee;
//  - every victim set is minimal: the job fits with all its victims gone and does not fit
//    with any one of them kept;
//  - a job is never preempted for twice (no thrash) before it starts;
//  - every pending job has a reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/alloc/resreq_allocator.h"
#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

struct Run {
  uint64_t seed;
  bool priority_preemption;
};

ClusterConfig RandomCluster(std::mt19937_64& rng, bool priority_preemption) {
  auto uniform = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  ClusterConfig config;
  const int hosts = uniform(2, 6);
  for (int h = 0; h < hosts; ++h) {
    config.hosts.push_back(HostSpec{
        .name = "h" + std::to_string(h + 1), .slots = uniform(1, 4), .resources = {{"mem", 8000}}});
  }
  const int queues = uniform(2, 3);
  double left = 100;
  for (int q = 0; q < queues; ++q) {
    QueueSpec spec{.name = "q" + std::to_string(q), .priority = uniform(0, 3)};
    if (!priority_preemption) {
      const double guarantee =
          q + 1 == queues ? left : std::min(left, static_cast<double>(uniform(10, 60)));
      spec.capacity = guarantee;
      left -= guarantee;
      spec.max_capacity = std::max(guarantee, static_cast<double>(uniform(50, 100)));
      spec.reclaim_after = uniform(0, 2) * 50;
      if (uniform(0, 2) == 0) spec.user_limit_pct = uniform(20, 60);
    } else {
      spec.preemptive = uniform(0, 1) == 0;
      spec.preemptable = uniform(0, 1) == 0;
    }
    if (uniform(0, 3) == 0) spec.fairshare = {{"default", 1}, {"u1", 2}};
    config.queues.push_back(spec);
  }
  if (uniform(0, 1) == 0) {
    config.limits.push_back(LimitSpec{
        .name = "per_user", .users = {.set = true, .per_each = true}, .slots = uniform(2, 6)});
  }
  return config;
}

// Returns how many victims the run chose (the tests require some, so they test something).
int CheckRun(const Run& run) {
  int victims_chosen = 0;
  SCOPED_TRACE("seed " + std::to_string(run.seed) +
               (run.priority_preemption ? " priority" : " capacity"));
  std::mt19937_64 rng(run.seed);
  auto uniform = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  const ClusterConfig config = RandomCluster(rng, run.priority_preemption);
  Result<ClusterState> created = ClusterState::Create(config);
  EXPECT_TRUE(created.has_value()) << created.error().ToString();
  if (!created.has_value()) return 0;
  ClusterState state = std::move(created).value();
  Scheduler scheduler;
  ResreqAllocator allocator;
  std::set<JobId> preempted_for;  // jobs that got victims and have not started since
  JobId next_id = 1;
  std::map<JobId, Instant> ends;
  for (Instant t = 0; t < 400; t += uniform(1, 20)) {
    for (int n = uniform(0, 3); n > 0; --n) {
      const int tasks = uniform(1, 3);
      JobSpec spec = testing::JobBuilder(next_id++)
                         .Tasks(tasks)
                         .Queue(config
                                    .queues[static_cast<size_t>(
                                        uniform(0, static_cast<int>(config.queues.size()) - 1))]
                                    .name)
                         .User("u" + std::to_string(uniform(1, 3)))
                         .Limit(uniform(10, 200))
                         .Submit(t);
      if (uniform(0, 3) == 0) spec.resreq = "rusage[mem=1000] span[hosts=1]";
      EXPECT_TRUE(Apply(JobSubmitted{spec}, t, state).ok());
      ends[spec.id] = 0;
    }
    for (auto it = ends.begin(); it != ends.end(); ++it) {
      const Job* job = state.FindJob(it->first);
      if (job->state == JobState::kRunning && job->start_time + *job->spec.run_limit <= t) {
        EXPECT_TRUE(Apply(JobFinished{.job = job->spec.id}, t, state).ok());
      }
    }
    const bool reservations = !state.preemptions().empty();
    CycleResult cycle = scheduler.RunCycle(state, t, {.explain = true});
    // Every pending job has a reason (or was decided).
    std::set<JobId> explained;
    for (const Decision& d : cycle.decisions) {
      if (const auto* p = std::get_if<PendJob>(&d)) {
        EXPECT_FALSE(p->reasons.empty()) << "job " << p->job;
        explained.insert(p->job);
      } else if (const auto* s = std::get_if<StartJob>(&d)) {
        explained.insert(s->job);
        preempted_for.erase(s->job);
      } else if (const auto* f = std::get_if<FailJob>(&d)) {
        explained.insert(f->job);
      }
    }
    for (const Queue& queue : state.topology().queues()) {
      for (const PendingEntry& entry : queue.pending)
        EXPECT_TRUE(explained.contains(entry.job->spec.id))
            << "job " << entry.job->spec.id << " has no reason";
    }
    // Queue use before the cycle, for the guarantee check.
    std::vector<int64_t> used_before;
    for (const Queue& queue : state.topology().queues()) used_before.push_back(queue.used_slots);
    Commit(cycle, t, state);
    const double total = static_cast<double>(state.topology().total_slots());
    for (const Queue& queue : state.topology().queues()) {
      EXPECT_LE(static_cast<double>(queue.used_slots), queue.spec.max_capacity / 100 * total + 1e-9)
          << "queue " << queue.spec.name << " above its maximum at t=" << t;
    }
    for (const Host& host : state.topology().hosts()) EXPECT_LE(host.used_slots, host.spec.slots);
    std::map<JobId, std::vector<const Job*>> victims_of;
    std::map<QueueIndex, int64_t> taken;
    for (const Decision& d : cycle.decisions) {
      const auto* p = std::get_if<PreemptJob>(&d);
      if (p == nullptr) continue;
      victims_of[p->for_job].push_back(state.FindJob(p->victim));
      taken[state.FindJob(p->victim)->queue] += state.FindJob(p->victim)->allocation.TotalSlots();
    }
    for (const auto& [for_job, victims] : victims_of) {
      victims_chosen += static_cast<int>(victims.size());
      EXPECT_TRUE(preempted_for.insert(for_job).second)
          << "job " << for_job << " preempted for twice";
      if (reservations) continue;  // withheld hosts make the cycle's capacity differ
      const Job& job = *state.FindJob(for_job);
      auto fits_without = [&](const std::vector<const Job*>& gone) {
        Capacity capacity(state);
        std::map<HostIndex, int32_t> on;
        for (const Job* v : gone)
          for (const HostGrant& g : v->allocation.hosts) ++on[g.host];
        for (const Job* v : gone) {
          for (const HostGrant& g : v->allocation.hosts) {
            const Host& host = state.topology().hosts()[g.host];
            capacity.Credit(host, g, host.SlotsTaken(g), on[g.host] == host.running_jobs);
          }
        }
        return allocator.Nominate(job, state, capacity).ok;
      };
      EXPECT_TRUE(fits_without(victims)) << "victims of job " << for_job << " do not make room";
      for (size_t i = 0; i < victims.size(); ++i) {
        std::vector<const Job*> fewer = victims;
        fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
        EXPECT_FALSE(fits_without(fewer))
            << "victim " << victims[i]->spec.id << " of job " << for_job << " is not needed";
      }
    }
    if (!run.priority_preemption) {
      for (const auto& [queue, slots] : taken) {
        const double guarantee =
            state.topology().queues()[queue].spec.capacity.value_or(0) / 100 * total;
        EXPECT_GE(static_cast<double>(state.topology().queues()[queue].used_slots - slots) + 1e-9,
                  guarantee)
            << "reclaim took queue " << state.topology().queues()[queue].spec.name
            << " below its guarantee";
      }
    }
    // Victims exit and are requeued at once.
    for (const auto& [for_job, victims] : victims_of) {
      for (const Job* v : victims) EXPECT_TRUE(Apply(JobRequeued{v->spec.id}, t, state).ok());
    }
  }
  return victims_chosen;
}

TEST(CapacityPropertyTest, CapacityQueuesKeepTheirInvariants) {
  int victims = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) victims += CheckRun({seed, false});
  EXPECT_GT(victims, 20);
}

TEST(CapacityPropertyTest, PriorityPreemptionKeepsItsInvariants) {
  int victims = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) victims += CheckRun({seed, true});
  EXPECT_GT(victims, 20);
}

}  // namespace
}  // namespace sluice::core
