// Named limits at run time (R-Q-2): per-user, per-queue, project, jobs, resources, per-host
// and host-group scopes; a job at a limit is skipped with LIMIT / HOST_LIMIT, never a head.
#include <gtest/gtest.h>

#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::CycleAndCommit;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::Started;
using testing::Submit;

LimitSpec PerUserSlots(int64_t slots) {
  return LimitSpec{.name = "u_slots", .users = {.set = true, .per_each = true}, .slots = slots};
}

TEST(LimitsCycleTest, PerUserSlotLimitSkipsTheUserAtItsLimitAndLetsOthersRun) {
  ClusterState state =
      ClusterBuilder().Hosts(4, 4).Policy(PolicyKind::kFifo).Limit(PerUserSlots(8)).State();
  for (JobId id = 1; id <= 3; ++id) Submit(state, JobBuilder(id).Tasks(4).User("alice"));
  Submit(state, JobBuilder(4).Tasks(4).User("bob"));
  CycleResult result = CycleAndCommit(state, 0);
  // Job 3 would take alice to 12 > 8: skipped, not a head, so bob's job 4 starts.
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 2, 4}));
  auto reasons = ReasonsOf(result, 3);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kLimit);
  const ReasonDetail& detail = reasons->details.front();
  EXPECT_EQ(detail.limit, "u_slots");
  EXPECT_EQ(detail.scope, "user alice");
  EXPECT_EQ(detail.resource, "slots");
  EXPECT_EQ(detail.used, 8);
  EXPECT_EQ(detail.max, 8);
}

TEST(LimitsCycleTest, UsageIsCreditedWhenAJobEnds) {
  ClusterState state =
      ClusterBuilder().Hosts(4, 4).Policy(PolicyKind::kFifo).Limit(PerUserSlots(4)).State();
  Submit(state, JobBuilder(1).Tasks(4).User("alice"));
  Submit(state, JobBuilder(2).Tasks(4).User("alice"));
  EXPECT_EQ(Started(CycleAndCommit(state, 0)), (std::vector<JobId>{1}));
  ASSERT_TRUE(Apply(JobFinished{.job = 1}, 10, state).ok());
  EXPECT_EQ(Started(CycleAndCommit(state, 10)), (std::vector<JobId>{2}));
}

TEST(LimitsCycleTest, JobsLimitOverAQueueCountsJobsNotSlots) {
  LimitSpec limit{.name = "q_jobs", .queues = {.set = true, .names = {"normal"}}, .jobs = 2};
  ClusterState state = ClusterBuilder().Hosts(8, 1).Policy(PolicyKind::kFifo).Limit(limit).State();
  for (JobId id = 1; id <= 3; ++id)
    Submit(state, JobBuilder(id).Tasks(1).User("u" + std::to_string(id)));
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 2}));
  EXPECT_EQ(ReasonsOf(result, 3)->details.front().resource, "jobs");
  EXPECT_EQ(ReasonsOf(result, 3)->details.front().scope, "");
}

TEST(LimitsCycleTest, ResourceLimitPerProjectCountsRusageTimesTasks) {
  LimitSpec limit{
      .name = "p_mem", .projects = {.set = true, .per_each = true}, .resources = {{"mem", 6000}}};
  HostSpec host{.name = "h1", .slots = 8, .resources = {{"mem", 64000}}};
  ClusterState state = ClusterBuilder().Host(host).Policy(PolicyKind::kFifo).Limit(limit).State();
  Submit(state, JobBuilder(1).Tasks(2).Project("p1").ResReq("rusage[mem=2000]"));  // 4000
  Submit(state, JobBuilder(2).Tasks(2).Project("p1").ResReq("rusage[mem=2000]"));  // 8000 > 6000
  Submit(state, JobBuilder(3).Tasks(2).Project("p2").ResReq("rusage[mem=2000]"));
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 3}));
  auto reasons = ReasonsOf(result, 2);
  ASSERT_TRUE(reasons.has_value());
  const ReasonDetail& detail = reasons->details.front();
  EXPECT_EQ(detail.resource, "mem");
  EXPECT_EQ(detail.used, 4000);
  EXPECT_EQ(detail.scope, "project p1");
}

TEST(LimitsCycleTest, LimitOutsideItsScopeDoesNotApply) {
  LimitSpec limit{.name = "bob_only", .users = {.set = true, .names = {"bob"}}, .slots = 1};
  ClusterState state = ClusterBuilder().Hosts(4, 1).Policy(PolicyKind::kFifo).Limit(limit).State();
  Submit(state, JobBuilder(1).Tasks(2).User("alice"));
  Submit(state, JobBuilder(2).Tasks(1).User("bob"));
  Submit(state, JobBuilder(3).Tasks(1).User("bob"));
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 2}));
  EXPECT_EQ(ReasonsOf(result, 3)->main, ReasonCode::kLimit);
}

TEST(LimitsCycleTest, PerHostSlotLimitSpreadsAUsersTasks) {
  LimitSpec limit{.name = "per_host",
                  .users = {.set = true, .per_each = true},
                  .hosts = {.set = true, .per_each = true},
                  .slots = 2};
  ClusterState state = ClusterBuilder().Hosts(2, 4).Policy(PolicyKind::kFifo).Limit(limit).State();
  Submit(state, JobBuilder(1).Tasks(2).User("alice").ResReq("span[hosts=1]"));
  Submit(state, JobBuilder(2).Tasks(2).User("alice").ResReq("span[hosts=1]"));
  Submit(state, JobBuilder(3).Tasks(2).User("alice").ResReq("span[hosts=1]"));
  Submit(state, JobBuilder(4).Tasks(2).User("bob").ResReq("span[hosts=1]"));
  CycleResult result = CycleAndCommit(state, 0);
  // alice gets 2 slots on each host; her third job is at the per-host limit everywhere and
  // is skipped (not a head), so bob's job starts behind it.
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 2, 4}));
  EXPECT_NE(testing::StartOf(result, 1)->allocation.hosts[0].host,
            testing::StartOf(result, 2)->allocation.hosts[0].host);
  auto reasons = ReasonsOf(result, 3);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kHostLimit);
  EXPECT_EQ(reasons->details.size(), 1u);
  EXPECT_EQ(reasons->details[0].hosts, 2);
  EXPECT_EQ(reasons->details[0].limit, "per_host");
}

TEST(LimitsCycleTest, HostLimitAndAShortageTogetherKeepTheJobAHead) {
  LimitSpec limit{
      .name = "h1_cap", .hosts = {.set = true, .per_each = true, .names = {"h1"}}, .slots = 1};
  ClusterState state = ClusterBuilder().Hosts(2, 2).Policy(PolicyKind::kFifo).Limit(limit).State();
  testing::SubmitRunning(state, JobBuilder(9).Tasks(1), 0);  // on h1: h1 is at its limit
  Submit(state, JobBuilder(1).Tasks(4));                     // 3 slots free, 2 of them usable
  Submit(state, JobBuilder(2).Tasks(1));
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_TRUE(Started(result).empty());  // job 1 is the blocked head: it lacks slots anyway
  auto reasons = ReasonsOf(result, 1);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kNoResource);
  bool has_host_limit = false;
  for (const ReasonDetail& d : reasons->details) has_host_limit |= d.code == ReasonCode::kHostLimit;
  EXPECT_TRUE(has_host_limit);
  EXPECT_EQ(ReasonsOf(result, 2)->main, ReasonCode::kPriorityWait);
}

TEST(LimitsCycleTest, LimitOverHostsTogetherCapsTheirSum) {
  LimitSpec limit{.name = "pair", .hosts = {.set = true, .names = {"h1", "h2"}}, .slots = 3};
  ClusterState state = ClusterBuilder().Hosts(3, 2).Policy(PolicyKind::kFifo).Limit(limit).State();
  Submit(state, JobBuilder(1).Tasks(2).ResReq("span[hosts=1]"));
  Submit(state, JobBuilder(2).Tasks(2).ResReq("span[hosts=1]"));
  Submit(state, JobBuilder(3).Tasks(2).ResReq("span[hosts=1]"));
  CycleResult result = CycleAndCommit(state, 0);
  // 1 takes 2 of the pair's 3; 2 would make 4 there, so it goes to h3; 3 finds no room.
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 2}));
  EXPECT_EQ(state.topology().hosts()[2].used_slots, 2);
  EXPECT_EQ(ReasonsOf(result, 3)->main, ReasonCode::kHostLimit);
}

TEST(LimitsCycleTest, ReconfigureRecountsUsageOfRunningJobs) {
  ClusterBuilder builder;
  builder.Hosts(4, 4).Policy(PolicyKind::kFifo);
  ClusterState state = builder.State();
  Submit(state, JobBuilder(1).Tasks(4).User("alice"));
  CycleAndCommit(state, 0);
  ClusterConfig config = builder.Config();
  config.limits.push_back(PerUserSlots(4));
  ASSERT_TRUE(state.Reconfigure(config).ok());
  Submit(state, JobBuilder(2).Tasks(1).User("alice"));
  CycleResult result = CycleAndCommit(state, 1);
  EXPECT_TRUE(Started(result).empty());
  EXPECT_EQ(ReasonsOf(result, 2)->details.front().used, 4);
}

}  // namespace
}  // namespace sluice::core
