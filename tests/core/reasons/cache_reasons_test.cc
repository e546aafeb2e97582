// R-PR-3 for every allocation code: a job answered by the unsatisfiable cache gets the same
// reasons as a fresh evaluation of that job alone. Two identical jobs in an easy_backfill
// queue (run limit 0, so backfill nominates the second): the first is the blocked head and
// fills the cache, the second meets it.
#include <gtest/gtest.h>

#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::Submit;
using testing::SubmitRunning;

struct Case {
  std::string_view name;
  ReasonCode main;
  std::string resreq;
  int32_t tasks = 1;
  bool exclusive = false;
};

ClusterState Cluster() {
  HostSpec a{.name = "a",
             .slots = 4,
             .resources = {{"mem", 4000}},
             .attributes = {{"type", "linux"}, {"rack", "r1"}}};
  HostSpec b{.name = "b",
             .slots = 4,
             .resources = {{"mem", 4000}},
             .attributes = {{"type", "linux"}, {"rack", "r2"}}};
  HostSpec c{.name = "c", .slots = 4, .attributes = {{"type", "big"}}, .state = HostState::kClosed};
  HostSpec d{
      .name = "d", .slots = 4, .attributes = {{"type", "huge"}}, .state = HostState::kUnavail};
  ClusterState state = ClusterBuilder()
                           .Host(a)
                           .Host(b)
                           .Host(c)
                           .Host(d)
                           .Queue("q", PolicyKind::kEasyBackfill)
                           .State();
  // Host a full and two slots busy on b until t=100. SubmitRunning grants slots only, so
  // shortages of memory and licenses and select[] on free amounts are covered by the golden
  // cases (tests/golden/cases/reasons) and the audit property test instead.
  SubmitRunning(
      state, JobBuilder(100).Tasks(6).Limit(100).Queue("q").ResReq("rusage[mem=500] span[ptile=3]"),
      0);
  return state;
}

TEST(CacheReasonsTest, CachedReasonsEqualAFreshEvaluationForEveryAllocationCode) {
  const Case cases[] = {
      {"slots", ReasonCode::kNoResource, "select[type==linux]", 5},
      {"one host", ReasonCode::kNoResource, "select[type==linux] span[hosts=1]", 3},
      {"ptile", ReasonCode::kNoResource, "select[type==linux] span[ptile=2]", 4},
      {"same", ReasonCode::kNoResource, "select[type==linux] same[rack]", 3},
      {"closed", ReasonCode::kHostClosed, "select[type==big]", 1},
      {"unavailable", ReasonCode::kHostUnavail, "select[type==huge]", 1},
      {"exclusive", ReasonCode::kExclusive, "select[type==linux]", 1, true},
      {"alternatives", ReasonCode::kHostClosed, "{select[type==big]} || {select[type==huge]}", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto job = [&](JobId id) {
      JobBuilder b = JobBuilder(id).Tasks(c.tasks).Limit(0).Queue("q").ResReq(c.resreq);
      if (c.exclusive) b.Exclusive();
      return b;
    };
    ClusterState both = Cluster();
    Submit(both, job(1));
    Submit(both, job(2));
    CycleResult result = Scheduler().RunCycle(both, 1, {.explain = true});
    EXPECT_GE(result.stats.cache_hits, 1);
    ClusterState alone = Cluster();
    Submit(alone, job(2));
    const auto fresh = ReasonsOf(Scheduler().RunCycle(alone, 1, {.explain = true}), 2);
    ASSERT_TRUE(fresh.has_value());
    EXPECT_EQ(fresh->main, c.main);
    EXPECT_EQ(ReasonsOf(result, 2), fresh);
    EXPECT_EQ(ReasonsOf(result, 1), fresh);
  }
}

}  // namespace
}  // namespace sluice::core
