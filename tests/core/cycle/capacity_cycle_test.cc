// Capacity queues and preemption (R-Q-1, R-CAP-1 … R-CAP-4): queue order by guarantee,
// max_capacity, the minimum user limit, reclaim deadlines and victims, priority preemption,
// and the reservation of freed slots (PREEMPTING).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/cycle/preemption.h"
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

QueueSpec CapacityQueue(std::string name, double capacity, double max_capacity = 100,
                        Duration reclaim_after = 300) {
  return QueueSpec{.name = std::move(name),
                   .capacity = capacity,
                   .max_capacity = max_capacity,
                   .reclaim_after = reclaim_after};
}

std::vector<const PreemptJob*> Preemptions(const CycleResult& result) {
  std::vector<const PreemptJob*> out;
  for (const Decision& d : result.decisions) {
    if (const auto* p = std::get_if<PreemptJob>(&d)) out.push_back(p);
  }
  return out;
}

std::optional<Instant> ReclaimDeadline(const CycleResult& result, QueueIndex queue) {
  std::optional<Instant> deadline;
  for (const Decision& d : result.decisions) {
    if (const auto* u = std::get_if<UpdateReclaim>(&d); u && u->queue == queue)
      deadline = u->deadline;
  }
  return deadline;
}

// Applies the preemptions (victims exit at once and are requeued), as a driver does.
void RequeueVictims(const CycleResult& result, Instant now, ClusterState& state) {
  for (const PreemptJob* p : Preemptions(result))
    ASSERT_TRUE(Apply(JobRequeued{p->victim}, now, state).ok());
}

TEST(CapacityCycleTest, QueueBelowItsGuaranteeIsOfferedCapacityFirst) {
  // b is idle-guaranteed 50 %; a (higher priority) holds everything it was lent.
  ClusterState state = ClusterBuilder()
                           .Hosts(4, 1)
                           .Queue(QueueSpec{.name = "a", .priority = 10, .capacity = 50})
                           .Queue(QueueSpec{.name = "b", .priority = 0, .capacity = 50})
                           .State();
  Submit(state, JobBuilder(1).Tasks(1).Queue("a"));
  Submit(state, JobBuilder(2).Tasks(1).Queue("a"));
  Submit(state, JobBuilder(3).Tasks(1).Queue("a"));
  CycleAndCommit(state, 0);  // a borrows 3 of 4 slots
  Submit(state, JobBuilder(4).Tasks(1).Queue("a"));
  Submit(state, JobBuilder(5).Tasks(1).Queue("b"));
  // b is below its guarantee with runnable work: it goes first despite its lower priority.
  EXPECT_EQ(Started(CycleAndCommit(state, 1)), (std::vector<JobId>{5}));
}

TEST(CapacityCycleTest, WithoutCapacitiesQueuesGoByPriorityThenName) {
  ClusterState state = ClusterBuilder()
                           .Hosts(1, 1)
                           .Queue(QueueSpec{.name = "b", .priority = 5})
                           .Queue(QueueSpec{.name = "a", .priority = 5})
                           .State();
  Submit(state, JobBuilder(1).Tasks(1).Queue("b"));
  Submit(state, JobBuilder(2).Tasks(1).Queue("a"));
  EXPECT_EQ(Started(CycleAndCommit(state, 0)), (std::vector<JobId>{2}));
}

TEST(CapacityCycleTest, QueueNeverExceedsItsMaximum) {
  ClusterState state = ClusterBuilder().Hosts(10, 1).Queue(CapacityQueue("a", 30, 50)).State();
  for (JobId id = 1; id <= 6; ++id) Submit(state, JobBuilder(id).Tasks(1).Queue("a"));
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(result).size(), 5u);
  auto reasons = ReasonsOf(result, 6);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kQueueCapacity);
  EXPECT_EQ(reasons->details[0].used, 5);
  EXPECT_EQ(reasons->details[0].max, 5);
}

TEST(CapacityCycleTest, UserAtTheMinimumUserLimitWaitsWhileOthersWait) {
  QueueSpec queue = CapacityQueue("a", 100);
  queue.user_limit_pct = 50;
  ClusterState state = ClusterBuilder().Hosts(4, 1).Queue(queue).State();
  for (JobId id = 1; id <= 4; ++id) Submit(state, JobBuilder(id).Tasks(1).Queue("a").User("alice"));
  Submit(state, JobBuilder(5).Tasks(1).Queue("a").User("bob"));
  Submit(state, JobBuilder(6).Tasks(1).Queue("a").User("bob"));
  CycleResult result = CycleAndCommit(state, 0);
  // Two active users, 4 slots: each may hold 2 while the other waits.
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 2, 5, 6}));
  auto reasons = ReasonsOf(result, 3);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kUserLimit);
  EXPECT_EQ(reasons->details[0].used, 2);
  EXPECT_EQ(reasons->details[0].max, 2);
}

TEST(CapacityCycleTest, UserLimitStopsBindingOnceTheOtherUsersWorkHasStarted) {
  QueueSpec queue = CapacityQueue("a", 100);
  queue.user_limit_pct = 50;
  ClusterState state = ClusterBuilder().Hosts(4, 1).Queue(queue).State();
  testing::SubmitRunning(state, JobBuilder(1).Tasks(2).Queue("a").User("bob"), 0);
  Submit(state, JobBuilder(2).Tasks(1).Queue("a").User("alice"));  // alice's only job
  Submit(state, JobBuilder(3).Tasks(1).Queue("a").User("bob"));
  // Alice's job starts first; then nobody else waits, so bob may go beyond his half.
  EXPECT_EQ(Started(CycleAndCommit(state, 1)), (std::vector<JobId>{2, 3}));
}

TEST(CapacityCycleTest, ReclaimTakesEnoughForEveryStarvedJobOverCycles) {
  ClusterState state = ClusterBuilder()
                           .Hosts(4, 1)
                           .Queue(CapacityQueue("a", 50))
                           .Queue(CapacityQueue("b", 50, 100, /*reclaim_after=*/0))
                           .State();
  for (JobId id = 1; id <= 4; ++id) Submit(state, JobBuilder(id).Tasks(1).Queue("a"));
  CycleAndCommit(state, 0);
  Submit(state, JobBuilder(10).Tasks(1).Queue("b"));
  Submit(state, JobBuilder(11).Tasks(1).Queue("b"));
  CycleResult first = CycleAndCommit(state, 1);
  ASSERT_EQ(Preemptions(first).size(), 1u);  // for job 10, the blocked head
  RequeueVictims(first, 1, state);
  CycleResult second = CycleAndCommit(state, 1);  // 10 starts; 11 is the next blocked head
  EXPECT_EQ(Started(second), (std::vector<JobId>{10}));
  ASSERT_EQ(Preemptions(second).size(), 1u);
  RequeueVictims(second, 1, state);
  EXPECT_EQ(Started(CycleAndCommit(state, 1)), (std::vector<JobId>{11}));
}

TEST(CapacityCycleTest, BoundedBackfillQueuesReclaimToo) {
  QueueSpec b = CapacityQueue("b", 50, 100, 0);
  b.policy = PolicyKind::kBoundedBackfill;
  ClusterState state = ClusterBuilder().Hosts(4, 1).Queue(CapacityQueue("a", 50)).Queue(b).State();
  for (JobId id = 1; id <= 4; ++id) Submit(state, JobBuilder(id).Tasks(1).Queue("a"));
  CycleAndCommit(state, 0);
  Submit(state, JobBuilder(10).Tasks(2).Queue("b"));
  EXPECT_EQ(Preemptions(CycleAndCommit(state, 1)).size(), 2u);
}

TEST(CapacityCycleTest, AloneAUserMayTakeTheWholeQueue) {
  QueueSpec queue = CapacityQueue("a", 100);
  queue.user_limit_pct = 25;
  ClusterState state = ClusterBuilder().Hosts(4, 1).Queue(queue).State();
  for (JobId id = 1; id <= 4; ++id) Submit(state, JobBuilder(id).Tasks(1).Queue("a").User("alice"));
  EXPECT_EQ(Started(CycleAndCommit(state, 0)).size(), 4u);
}

// The review's first scenario: two queues at 50/50; one borrows all idle capacity, the other
// reclaims after its deadline, and the borrowed jobs are requeued at their position.
TEST(CapacityCycleTest, StarvedQueueReclaimsAfterItsDeadline) {
  ClusterState state = ClusterBuilder()
                           .Hosts(4, 1)
                           .Queue(CapacityQueue("a", 50))
                           .Queue(CapacityQueue("b", 50, 100, /*reclaim_after=*/60))
                           .State();
  for (JobId id = 1; id <= 4; ++id) Submit(state, JobBuilder(id).Tasks(1).Queue("a").Submit(id));
  EXPECT_EQ(Started(CycleAndCommit(state, 0)).size(), 4u);  // a borrows b's half
  Submit(state, JobBuilder(10).Tasks(2).Queue("b").Submit(5));
  CycleResult first = CycleAndCommit(state, 5);
  EXPECT_TRUE(Preemptions(first).empty());
  EXPECT_EQ(ReclaimDeadline(first, 1), 65);
  EXPECT_EQ(first.wake_at, 65);
  EXPECT_TRUE(Preemptions(CycleAndCommit(state, 30)).empty());  // before the deadline
  CycleResult at_deadline = CycleAndCommit(state, 65);
  auto victims = Preemptions(at_deadline);
  ASSERT_EQ(victims.size(), 2u);  // exactly what b needs, most recently started first
  EXPECT_EQ(victims[0]->victim, 4);
  EXPECT_EQ(victims[1]->victim, 3);
  EXPECT_EQ(victims[0]->for_job, 10);
  EXPECT_EQ(victims[0]->kill_at, 65 + 30);
  // Victims still running: job 10 waits with PREEMPTING and gets no new victims.
  CycleResult waiting = CycleAndCommit(state, 66);
  EXPECT_TRUE(Preemptions(waiting).empty());
  EXPECT_EQ(ReasonsOf(waiting, 10)->main, ReasonCode::kPreempting);
  RequeueVictims(at_deadline, 70, state);
  CycleResult after = CycleAndCommit(state, 70);
  EXPECT_EQ(Started(after), (std::vector<JobId>{10}));
  EXPECT_EQ(ReclaimDeadline(after, 1), std::nullopt);  // b is at its guarantee: cleared
  EXPECT_TRUE(state.preemptions().empty());
  // The victims are back in a's queue at their original positions, ahead of later jobs.
  Submit(state, JobBuilder(20).Tasks(1).Queue("a").Submit(71));
  const Queue& a = state.topology().queues()[0];
  std::vector<JobId> order;
  for (const PendingEntry& entry : a.pending) order.push_back(entry.job->spec.id);
  EXPECT_EQ(order, (std::vector<JobId>{3, 4, 20}));
}

TEST(CapacityCycleTest, DeadlineIsClearedWhenTheStarvedWorkGoesAway) {
  ClusterState state = ClusterBuilder()
                           .Hosts(2, 1)
                           .Queue(CapacityQueue("a", 50))
                           .Queue(CapacityQueue("b", 50))
                           .State();
  Submit(state, JobBuilder(1).Tasks(1).Queue("a"));
  Submit(state, JobBuilder(2).Tasks(1).Queue("a"));
  CycleAndCommit(state, 0);
  Submit(state, JobBuilder(3).Tasks(1).Queue("b"));
  EXPECT_TRUE(ReclaimDeadline(CycleAndCommit(state, 1), 1).has_value());
  ASSERT_TRUE(Apply(JobCancelled{3}, 2, state).ok());
  CycleResult result = CycleAndCommit(state, 2);
  EXPECT_EQ(state.topology().queues()[1].reclaim_deadline, std::nullopt);
  EXPECT_TRUE(Preemptions(result).empty());
}

// The review's second scenario: three queues over capacity are levelled by reclaim, and no
// queue is taken below its guarantee.
TEST(CapacityCycleTest, ReclaimLevelsTheMostOverGuaranteeQueuesFirst) {
  ClusterState state = ClusterBuilder()
                           .Hosts(10, 1)
                           .Queue(CapacityQueue("a", 20))
                           .Queue(CapacityQueue("b", 20))
                           .Queue(CapacityQueue("c", 20))
                           .Queue(CapacityQueue("d", 40, 100, 0))
                           .State();
  JobId id = 1;
  for (int i = 0; i < 5; ++i) Submit(state, JobBuilder(id++).Tasks(1).Queue("a"));  // 2.5x
  for (int i = 0; i < 3; ++i) Submit(state, JobBuilder(id++).Tasks(1).Queue("b"));  // 1.5x
  for (int i = 0; i < 2; ++i) Submit(state, JobBuilder(id++).Tasks(1).Queue("c"));  // 1.0x
  EXPECT_EQ(Started(CycleAndCommit(state, 0)).size(), 10u);
  Submit(state, JobBuilder(100).Tasks(3).Queue("d"));
  CycleResult result = CycleAndCommit(state, 1);  // reclaim_after 0: at once
  std::map<std::string, int> taken;
  for (const PreemptJob* p : Preemptions(result))
    taken[state.topology().queues()[state.FindJob(p->victim)->queue].spec.name]++;
  // a (2.5) loses 2 to reach 1.5, then the tie with b goes to... whichever is higher: a at 1.5
  // and b at 1.5 tie on ratio, broken by queue order; c (at its guarantee) loses nothing.
  EXPECT_EQ(taken["a"] + taken["b"], 3);
  EXPECT_GE(taken["a"], 2);
  EXPECT_EQ(taken["c"], 0);
}

TEST(CapacityCycleTest, VictimSetIsMinimal) {
  // b needs 2 slots on one host; a's jobs: one 2-slot job and 1-slot jobs elsewhere.
  ClusterState state = ClusterBuilder()
                           .Hosts(2, 2)
                           .Queue(CapacityQueue("a", 0))
                           .Queue(CapacityQueue("b", 100, 100, 0))
                           .State();
  Submit(state, JobBuilder(1).Tasks(2).Queue("a").ResReq("span[hosts=1]"));
  Submit(state, JobBuilder(2).Tasks(1).Queue("a"));
  Submit(state, JobBuilder(3).Tasks(1).Queue("a"));
  EXPECT_EQ(Started(CycleAndCommit(state, 0)).size(), 3u);
  Submit(state, JobBuilder(10).Tasks(2).Queue("b").ResReq("span[hosts=1]"));
  CycleResult result = CycleAndCommit(state, 1);
  auto victims = Preemptions(result);
  // Greedy takes 3 then 2 (most recent first; they share host h2): exactly those two.
  ASSERT_EQ(victims.size(), 2u);
  std::vector<JobId> ids{victims[0]->victim, victims[1]->victim};
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<JobId>{2, 3}));
}

TEST(CapacityCycleTest, QueueAtItsGuaranteeIsNeverPreempted) {
  ClusterState state = ClusterBuilder()
                           .Hosts(4, 1)
                           .Queue(CapacityQueue("a", 50))
                           .Queue(CapacityQueue("b", 50, 100, 0))
                           .State();
  Submit(state, JobBuilder(1).Tasks(2).Queue("a"));
  Submit(state, JobBuilder(2).Tasks(2).Queue("b"));
  CycleAndCommit(state, 0);
  Submit(state, JobBuilder(3).Tasks(2).Queue("b"));  // b wants more than its guarantee
  CycleResult result = CycleAndCommit(state, 1);
  EXPECT_TRUE(Preemptions(result).empty());
  EXPECT_FALSE(state.topology().queues()[1].reclaim_deadline.has_value());  // b is not below it
}

TEST(CapacityCycleTest, PreemptiveQueuePreemptsLowerPriorityPreemptableQueues) {
  ClusterState state =
      ClusterBuilder()
          .Hosts(2, 1)
          .Queue(QueueSpec{.name = "urgent", .priority = 50, .preemptive = true})
          .Queue(QueueSpec{.name = "low", .priority = 1, .preemptable = true, .preempt_grace = 5})
          .Queue(QueueSpec{.name = "mid", .priority = 10, .preemptable = true})
          .State();
  Submit(state, JobBuilder(1).Tasks(1).Queue("mid"));
  Submit(state, JobBuilder(2).Tasks(1).Queue("low"));
  CycleAndCommit(state, 0);
  Submit(state, JobBuilder(3).Tasks(1).Queue("urgent"));
  CycleResult result = CycleAndCommit(state, 1);
  auto victims = Preemptions(result);
  ASSERT_EQ(victims.size(), 1u);
  EXPECT_EQ(victims[0]->victim, 2);  // lowest queue priority first
  EXPECT_EQ(victims[0]->kill_at, 6);
  RequeueVictims(result, 2, state);
  EXPECT_EQ(Started(CycleAndCommit(state, 2)), (std::vector<JobId>{3}));
}

TEST(CapacityCycleTest, NonPreemptableQueuesAreLeftAlone) {
  ClusterState state = ClusterBuilder()
                           .Hosts(1, 1)
                           .Queue(QueueSpec{.name = "urgent", .priority = 50, .preemptive = true})
                           .Queue(QueueSpec{.name = "low", .priority = 1})
                           .State();
  Submit(state, JobBuilder(1).Tasks(1).Queue("low"));
  CycleAndCommit(state, 0);
  Submit(state, JobBuilder(2).Tasks(1).Queue("urgent"));
  EXPECT_TRUE(Preemptions(CycleAndCommit(state, 1)).empty());
}

TEST(CapacityCycleTest, FreedSlotsAreKeptForTheJobTheyWereFreedFor) {
  ClusterState state = ClusterBuilder()
                           .Hosts(2, 1)
                           .Queue(QueueSpec{.name = "urgent", .priority = 50, .preemptive = true})
                           .Queue(QueueSpec{.name = "low", .priority = 1, .preemptable = true})
                           .State();
  Submit(state, JobBuilder(1).Tasks(1).Queue("low"));
  Submit(state, JobBuilder(2).Tasks(1).Queue("low"));
  CycleAndCommit(state, 0);
  Submit(state, JobBuilder(3).Tasks(2).Queue("urgent"));
  CycleResult preempt = CycleAndCommit(state, 1);
  ASSERT_EQ(Preemptions(preempt).size(), 2u);
  // One victim exits first; a small low job must not take its slot.
  ASSERT_TRUE(Apply(JobRequeued{1}, 2, state).ok());
  CycleResult partial = CycleAndCommit(state, 2);
  EXPECT_TRUE(Started(partial).empty());
  EXPECT_EQ(ReasonsOf(partial, 3)->main, ReasonCode::kPreempting);
  ASSERT_TRUE(Apply(JobRequeued{2}, 3, state).ok());
  EXPECT_EQ(Started(CycleAndCommit(state, 3)), (std::vector<JobId>{3}));
}

}  // namespace
}  // namespace sluice::core
