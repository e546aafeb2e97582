// The unsatisfiable-request cache (R-AL-5, R-PR-3): a hit skips the allocator and gives the
// original reasons; any difference in the key misses.
#include "core/admission/unsatisfiable_cache.h"

#include <gtest/gtest.h>

#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::Submit;

// Two 4-slot hosts, each half busy until t=100, two easy_backfill queues: a request for 3
// slots on one host fits the free slot count (4) but no host (2 free each).
// With `limited`, the cluster has a named limit (one that never binds), so the cache keys by
// user and project too.
ClusterState HalfBusy(bool limited = false) {
  HostSpec a{.name = "a", .slots = 4, .resources = {{"mem", 1000}}};
  HostSpec b{.name = "b", .slots = 4, .resources = {{"mem", 1000}}};
  ClusterBuilder builder;
  builder.Host(a)
      .Host(b)
      .Queue("q1", PolicyKind::kEasyBackfill)
      .Queue("q2", PolicyKind::kEasyBackfill);
  if (limited)
    builder.Limit(
        LimitSpec{.name = "roomy", .users = {.set = true, .per_each = true}, .slots = 1000});
  ClusterState state = builder.State();
  Submit(state, JobBuilder(100).Tasks(4).Limit(100).Queue("q1"));
  state.Start(100, Allocation{.hosts = {{.host = 0, .slots = 2}, {.host = 1, .slots = 2}}}, 0);
  state.MarkClassified();
  return state;
}

JobBuilder OneHost(JobId id) {
  // A zero run limit ends by any reservation, so easy_backfill nominates every such job.
  return JobBuilder(id).Tasks(3).Limit(0).Queue("q1").ResReq("span[hosts=1] rusage[mem=1]");
}

TEST(UnsatisfiableCacheTest, SecondJobWithTheSameKeyDoesNotReachTheAllocator) {
  for (bool explain : {true, false}) {
    SCOPED_TRACE(explain ? "explain" : "no explain");
    ClusterState state = HalfBusy();
    Submit(state, OneHost(1));
    Submit(state, OneHost(2));
    CycleResult result = Scheduler().RunCycle(state, 1, {.explain = explain});
    EXPECT_EQ(result.stats.allocator_calls, 1);
    EXPECT_EQ(result.stats.cache_hits, 1);
    if (explain) {
      // R-PR-3: the cached reasons are the original determination, and a fresh evaluation
      // of job 2 alone gives the same.
      EXPECT_EQ(ReasonsOf(result, 1), ReasonsOf(result, 2));
      ClusterState alone = HalfBusy();
      Submit(alone, OneHost(2));
      EXPECT_EQ(ReasonsOf(Scheduler().RunCycle(alone, 1, {.explain = true}), 2),
                ReasonsOf(result, 2));
    }
  }
}

TEST(UnsatisfiableCacheTest, AnyDifferenceInTheKeyMisses) {
  struct Case {
    std::string_view name;
    JobBuilder second;
  };
  const Case cases[] = {
      {"user", OneHost(2).User("u2")},
      {"queue", OneHost(2).Queue("q2")},
      {"project", OneHost(2).Project("p2")},
      {"exclusive", OneHost(2).Exclusive()},
      {"one rusage value", OneHost(2).ResReq("span[hosts=1] rusage[mem=2]")},
      {"one alternative",
       OneHost(2).ResReq("{span[hosts=1] rusage[mem=1]} || {span[hosts=1] rusage[mem=3]}")},
      {"task count", OneHost(2).TaskRange(3, 4)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ClusterState state = HalfBusy(/*limited=*/true);
    Submit(state, OneHost(1));
    Submit(state, c.second);
    CycleResult result = Scheduler().RunCycle(state, 1, {.explain = true});
    EXPECT_EQ(result.stats.cache_hits, 0);
    EXPECT_EQ(result.stats.allocator_calls, 2);
  }
}

// Without named limits nothing in Nominate reads the user or the project, so jobs of one
// shape share an entry whoever submits them (issue 8: a million jobs, a thousand shapes).
TEST(UnsatisfiableCacheTest, WithoutLimitsUserAndProjectShareAnEntry) {
  for (JobBuilder second : {OneHost(2).User("u2"), OneHost(2).Project("p2")}) {
    ClusterState state = HalfBusy();
    Submit(state, OneHost(1));
    Submit(state, second);
    CycleResult result = Scheduler().RunCycle(state, 1, {.explain = true});
    EXPECT_EQ(result.stats.cache_hits, 1);
    EXPECT_EQ(result.stats.allocator_calls, 1);
    EXPECT_EQ(ReasonsOf(result, 1), ReasonsOf(result, 2));
  }
}

TEST(UnsatisfiableCacheTest, EqualRequestsWrittenDifferentlyShareAnEntry) {
  ClusterState state = HalfBusy();
  Submit(state, OneHost(1));
  Submit(state, OneHost(2).ResReq("rusage[mem=1]   span[hosts=1]"));
  CycleResult result = Scheduler().RunCycle(state, 1, {.explain = true});
  EXPECT_EQ(result.stats.cache_hits, 1);
}

TEST(UnsatisfiableCacheTest, ACacheLivesForOneCycle) {
  ClusterState state = HalfBusy();
  Submit(state, OneHost(1));
  Scheduler scheduler;
  EXPECT_EQ(scheduler.RunCycle(state, 1).stats.allocator_calls, 1);
  EXPECT_EQ(scheduler.RunCycle(state, 2).stats.allocator_calls, 1);
}

}  // namespace
}  // namespace sluice::core
