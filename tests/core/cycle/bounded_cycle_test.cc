// The admission contract under bounded_backfill (R-ADM-1, R-ADM-2, R-ADM-4; seeds/000's
// acceptance list): cycles on hand-built states, each checking one behaviour.
#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::AdmissionUpdateOf;
using testing::ClusterBuilder;
using testing::CycleAndCommit;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::Started;
using testing::StartOf;
using testing::Submit;
using testing::SubmitRunning;

QueueSpec Bounded(std::string name, int32_t max_bypass, Duration max_head_wait,
                  int32_t priority = 0) {
  return QueueSpec{.name = std::move(name),
                   .priority = priority,
                   .policy = PolicyKind::kBoundedBackfill,
                   .max_bypass = max_bypass,
                   .max_head_wait = max_head_wait};
}

// Ten one-slot hosts, 7 busy until t=100: a 10-slot head (job 2) is temporarily unavailable.
ClusterState BlockedHead(int32_t max_bypass, Duration max_head_wait) {
  ClusterState state =
      ClusterBuilder().Hosts(10, 1).Queue(Bounded("normal", max_bypass, max_head_wait)).State();
  SubmitRunning(state, JobBuilder(1).Tasks(7).Limit(100), 0);
  Submit(state, JobBuilder(2).Tasks(10).Submit(5));
  return state;
}

TEST(BoundedCycleTest, AdmitsALaterJobWhileTheGateIsNotActiveAndCountsTheBypass) {
  ClusterState state = BlockedHead(/*max_bypass=*/5, /*max_head_wait=*/3600);
  Submit(state, JobBuilder(3).Tasks(1).Submit(6));
  CycleResult result = CycleAndCommit(state, 10);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
  EXPECT_TRUE(StartOf(result, 3)->backfilled);
  const AdmissionRecord& head = state.FindJob(2)->admission;
  EXPECT_EQ(head.bypass_count, 1);
  EXPECT_EQ(head.first_blocked, 10);
  EXPECT_FALSE(head.gate_active());
  EXPECT_EQ(result.wake_at, 10 + 3600);  // the aging deadline is a timer
}

// Many starts in one cycle (more than CycleContext reads without its id set): each later job
// starts once, and the scans after the first skip every job already started.
TEST(BoundedCycleTest, ManyBackfillsInOneCycleStartEachJobOnce) {
  ClusterState state =
      ClusterBuilder().Hosts(40, 1).Queue(Bounded("normal", /*max_bypass=*/100, 3600)).State();
  SubmitRunning(state, JobBuilder(1).Tasks(10).Limit(100), 0);
  Submit(state, JobBuilder(2).Tasks(40).Submit(5));
  for (JobId id = 3; id <= 32; ++id) Submit(state, JobBuilder(id).Tasks(1).Submit(6));
  CycleResult result = CycleAndCommit(state, 10);
  std::vector<JobId> want;
  for (JobId id = 3; id <= 32; ++id) want.push_back(id);
  EXPECT_EQ(Started(result), want);
  EXPECT_EQ(state.FindJob(2)->admission.bypass_count, 30);
  EXPECT_EQ(state.topology().free_slots(), 0);
}

TEST(BoundedCycleTest, AdmitsInQueueOrderNeverTheSmallestFirst) {
  ClusterState state = BlockedHead(5, 3600);
  Submit(state, JobBuilder(3).Tasks(3).Submit(6));
  Submit(state, JobBuilder(4).Tasks(1).Submit(7));
  CycleResult result = CycleAndCommit(state, 10);
  // Job 3 fits (3 free) and comes first in queue order; then nothing is left for job 4.
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kNoResource);
}

TEST(BoundedCycleTest, GateActivatesAtMaxBypassAndStopsLaterAdmissions) {
  ClusterState state = BlockedHead(/*max_bypass=*/2, /*max_head_wait=*/3600);
  for (JobId id = 3; id <= 5; ++id) Submit(state, JobBuilder(id).Tasks(1).Submit(6));
  CycleResult result = CycleAndCommit(state, 10);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3, 4}));
  const AdmissionRecord& head = state.FindJob(2)->admission;
  EXPECT_EQ(head.bypass_count, 2);
  EXPECT_EQ(head.gate_since, 10);
  auto reasons = ReasonsOf(result, 5);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kGated);
  EXPECT_EQ(reasons->details[0].job, 2);
  EXPECT_EQ(reasons->details[0].time, 10);
}

TEST(BoundedCycleTest, GateActivatesAtMaxHeadWaitAlone) {
  ClusterState state = BlockedHead(/*max_bypass=*/1000, /*max_head_wait=*/100);
  EXPECT_TRUE(CycleAndCommit(state, 10).decisions.size() > 0);  // first blocked at 10
  Submit(state, JobBuilder(3).Tasks(1).Submit(50));
  EXPECT_EQ(Started(CycleAndCommit(state, 50)), (std::vector<JobId>{3}));  // 40 s < 100 s
  Submit(state, JobBuilder(4).Tasks(1).Submit(110));
  CycleResult result = CycleAndCommit(state, 110);  // 100 s since first blocked
  EXPECT_TRUE(Started(result).empty());
  EXPECT_EQ(state.FindJob(2)->admission.gate_since, 110);
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kGated);
}

TEST(BoundedCycleTest, CountersAreNeverResetWhileTheJobWaits) {
  ClusterState state = BlockedHead(/*max_bypass=*/2, /*max_head_wait=*/3600);
  Submit(state, JobBuilder(3).Tasks(1).Submit(6));
  CycleAndCommit(state, 10);
  Submit(state, JobBuilder(4).Tasks(1).Submit(20));
  CycleAndCommit(state, 20);
  const AdmissionRecord& head = state.FindJob(2)->admission;
  EXPECT_EQ(head.bypass_count, 2);
  EXPECT_EQ(head.first_blocked, 10);  // not moved by later cycles
  EXPECT_EQ(head.gate_since, 20);
  Submit(state, JobBuilder(5).Tasks(1).Submit(30));
  EXPECT_TRUE(Started(CycleAndCommit(state, 30)).empty());
}

TEST(BoundedCycleTest, ReleasedSlotsAccumulateUntilTheGatedHeadStarts) {
  ClusterState state = BlockedHead(/*max_bypass=*/0, /*max_head_wait=*/3600);
  Submit(state, JobBuilder(3).Tasks(1).Submit(6));
  CycleResult gated = CycleAndCommit(state, 10);
  EXPECT_TRUE(Started(gated).empty());  // 3 slots free, none given to job 3
  ASSERT_TRUE(Apply(JobFinished{1}, 100, state).ok());
  CycleResult released = CycleAndCommit(state, 100);
  EXPECT_EQ(Started(released), (std::vector<JobId>{2}));  // the head, not job 3
}

TEST(BoundedCycleTest, CancellingTheGatedHeadReleasesTheGate) {
  ClusterState state = BlockedHead(/*max_bypass=*/0, /*max_head_wait=*/3600);
  Submit(state, JobBuilder(3).Tasks(1).Submit(6));
  EXPECT_TRUE(Started(CycleAndCommit(state, 10)).empty());
  ASSERT_TRUE(Apply(JobCancelled{2}, 20, state).ok());  // R-ADM-4
  EXPECT_EQ(Started(CycleAndCommit(state, 20)), (std::vector<JobId>{3}));
}

TEST(BoundedCycleTest, AHeldJobIsNeverTheHeadAndDoesNotBlock) {
  ClusterState state = ClusterBuilder().Hosts(2, 1).Queue(Bounded("normal", 0, 3600)).State();
  Submit(state, JobBuilder(1).Tasks(4).Hold());  // would be unschedulable if classified as 4 > 2
  Submit(state, JobBuilder(2).Tasks(1));
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{2}));
}

TEST(BoundedCycleTest, AGatedHeadWithholdsItsHostsFromLowerPriorityQueues) {
  HostSpec a{.name = "a", .slots = 4, .attributes = {{"type", "x"}}};
  HostSpec b{.name = "b", .slots = 4, .attributes = {{"type", "y"}}};
  ClusterState state = ClusterBuilder()
                           .Host(a)
                           .Host(b)
                           .Queue(Bounded("high", /*max_bypass=*/0, 3600, /*priority=*/10))
                           .Queue(QueueSpec{.name = "low", .priority = 1})
                           .State();
  SubmitRunning(state, JobBuilder(1).Tasks(2).Queue("high"), 0);  // 2 slots on a
  Submit(state, JobBuilder(2).Tasks(4).Queue("high").ResReq("select[type==x]"));
  Submit(state, JobBuilder(3).Tasks(1).Queue("low").ResReq("select[type==y]"));
  Submit(state, JobBuilder(4).Tasks(1).Queue("low").ResReq("select[type==x]"));
  CycleResult result = CycleAndCommit(state, 1);
  // Job 4 would fit on a's free slots, but they are held for the gated head; b is not.
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
  auto reasons = ReasonsOf(result, 4);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kGated);
}

TEST(BoundedCycleTest, ALaterQueueIsNotHeldBackWithoutAGate) {
  ClusterState state = ClusterBuilder()
                           .Hosts(4, 1)
                           .Queue(Bounded("high", /*max_bypass=*/5, 3600, /*priority=*/10))
                           .Queue(QueueSpec{.name = "low", .priority = 1})
                           .State();
  SubmitRunning(state, JobBuilder(1).Tasks(2).Queue("high"), 0);
  Submit(state, JobBuilder(2).Tasks(4).Queue("high"));
  Submit(state, JobBuilder(3).Tasks(1).Queue("low"));
  EXPECT_EQ(Started(CycleAndCommit(state, 1)), (std::vector<JobId>{3}));
}

TEST(BoundedCycleTest, ImpossibleRequestsFailAtOnceAndAreNeverRetried) {
  struct Case {
    std::string_view name;
    JobBuilder job;
  };
  const Case cases[] = {
      {"larger than all matching capacity", JobBuilder(2).Tasks(11)},
      {"a tag no host has", JobBuilder(2).ResReq("select[gpu_tag]")},
      {"a resource shape no host can hold", JobBuilder(2).ResReq("rusage[mem=99999]")},
      {"above the queue's slot limit", JobBuilder(2).Tasks(6)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    HostSpec host{.name = "h", .slots = 10, .resources = {{"mem", 1000}}};
    QueueSpec queue = Bounded("normal", 5, 3600);
    queue.slot_limit = 5;
    ClusterState state = ClusterBuilder().Host(host).Queue(queue).State();
    Submit(state, c.job);
    CycleResult first = CycleAndCommit(state, 0);
    ASSERT_EQ(first.stats.failed, 1);
    EXPECT_EQ(state.FindJob(2)->state, JobState::kExit);
    EXPECT_EQ(state.FindJob(2)->exit_cause, ExitCause::kUnschedulable);
    EXPECT_EQ(CycleAndCommit(state, 1).stats.evaluated, 0);  // never retried
  }
}

TEST(BoundedCycleTest, PolicyMaximumsMakeAJobUnschedulable) {
  LimitSpec limit{.name = "u_slots", .users = {.set = true, .per_each = true}, .slots = 4};
  QueueSpec capped{.name = "capped", .max_capacity = 50};
  ClusterState state = ClusterBuilder()
                           .Hosts(10, 1)
                           .Queue(QueueSpec{.name = "normal"})
                           .Queue(capped)
                           .Limit(limit)
                           .State();
  Submit(state, JobBuilder(1).Tasks(5));  // above the per-user limit of 4
  Submit(state, JobBuilder(2).Tasks(4));  // within it
  Submit(state, JobBuilder(3).Tasks(6).Queue("capped").User("u9"));  // 6 > 50% of 10
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(result.stats.failed, 2);
  EXPECT_EQ(state.FindJob(1)->exit_cause, ExitCause::kUnschedulable);
  EXPECT_EQ(state.FindJob(3)->exit_cause, ExitCause::kUnschedulable);
  EXPECT_EQ(state.FindJob(2)->state, JobState::kRunning);
}

TEST(BoundedCycleTest, AConfigWithoutTheNewKeysBehavesAsFifo) {
  ClusterState state = ClusterBuilder().Hosts(10, 1).Queue(QueueSpec{.name = "normal"}).State();
  EXPECT_EQ(state.topology().queues()[0].spec.policy, PolicyKind::kFifo);
  SubmitRunning(state, JobBuilder(1).Tasks(7), 0);
  Submit(state, JobBuilder(2).Tasks(10));
  Submit(state, JobBuilder(3).Tasks(1));
  CycleResult result = CycleAndCommit(state, 1);
  EXPECT_TRUE(Started(result).empty());
  EXPECT_EQ(ReasonsOf(result, 3)->main, ReasonCode::kPriorityWait);
}

TEST(BoundedCycleTest, EveryPolicyRecordsTheFirstBlockedTimeOfAHead) {
  for (PolicyKind policy :
       {PolicyKind::kFifo, PolicyKind::kEasyBackfill, PolicyKind::kBoundedBackfill}) {
    SCOPED_TRACE(std::string(ToString(policy)));
    ClusterState state = ClusterBuilder().Hosts(10, 1).Policy(policy).State();
    SubmitRunning(state, JobBuilder(1).Tasks(7).Limit(100), 0);
    Submit(state, JobBuilder(2).Tasks(10));
    CycleResult result = CycleAndCommit(state, 3);
    ASSERT_NE(AdmissionUpdateOf(result, 2), nullptr);
    EXPECT_EQ(state.FindJob(2)->admission.first_blocked, 3);
    EXPECT_EQ(AdmissionUpdateOf(CycleAndCommit(state, 4), 2), nullptr);  // set once
  }
}

}  // namespace
}  // namespace sluice::core
