// The drive loop's rules (core/driver/drive_loop.h): a handler sees every decision of a
// committed cycle once, in cycle order, with the state already committed; wake-ups are kept
// (the earliest wins), dropped once due, and never point at or before the cycle just run;
// Dispatch reaches the one method of each Decision alternative.
#include "core/driver/drive_loop.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cycle/events.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

// One line per call: the method and the job (or queue) it was given.
class RecordingHandler final : public DecisionHandler {
 public:
  explicit RecordingHandler(const ClusterState* state = nullptr) : state_(state) {}

  void OnStart(const StartJob& start, Instant now) override {
    Log("start", start.job, now);
    // After Commit: the state shows the start already.
    if (state_ != nullptr)
      started_running.push_back(state_->FindJob(start.job)->state == JobState::kRunning);
  }
  void OnFail(const FailJob& fail, Instant now) override { Log("fail", fail.job, now); }
  void OnPend(PendJob& pend, Instant now) override { Log("pend", pend.job, now); }
  void OnPreempt(const PreemptJob& preempt, Instant now) override {
    Log("preempt", preempt.victim, now);
  }
  void OnDropPreemption(const DropPreemption& drop, Instant now) override {
    Log("drop", drop.for_job, now);
  }
  void OnReclaim(const UpdateReclaim& reclaim, Instant now) override {
    Log("reclaim", static_cast<JobId>(reclaim.queue), now);
  }
  void OnUpdate(const UpdateAdmission& update, Instant now) override {
    Log("update", update.job, now);
  }

  std::vector<std::string> calls;
  std::vector<bool> started_running;

 private:
  void Log(const char* method, JobId id, Instant now) {
    calls.push_back(std::string(method) + " " + std::to_string(id) + " @" + std::to_string(now));
  }
  const ClusterState* state_;
};

// The line RecordingHandler writes for a decision, derived without Dispatch.
std::string LineOf(const Decision& decision, Instant now) {
  const std::string at = " @" + std::to_string(now);
  if (const auto* d = std::get_if<StartJob>(&decision))
    return "start " + std::to_string(d->job) + at;
  if (const auto* d = std::get_if<FailJob>(&decision)) return "fail " + std::to_string(d->job) + at;
  if (const auto* d = std::get_if<PendJob>(&decision)) return "pend " + std::to_string(d->job) + at;
  if (const auto* d = std::get_if<PreemptJob>(&decision)) {
    return "preempt " + std::to_string(d->victim) + at;
  }
  if (const auto* d = std::get_if<DropPreemption>(&decision)) {
    return "drop " + std::to_string(d->for_job) + at;
  }
  if (const auto* d = std::get_if<UpdateReclaim>(&decision)) {
    return "reclaim " + std::to_string(d->queue) + at;
  }
  return "update " + std::to_string(std::get<UpdateAdmission>(decision).job) + at;
}

QueueSpec Bounded(Duration max_head_wait) {
  return QueueSpec{.name = "normal",
                   .policy = PolicyKind::kBoundedBackfill,
                   .max_bypass = 5,
                   .max_head_wait = max_head_wait};
}

// Ten one-slot hosts, 7 busy until t=100; job 2 (10 slots) is a blocked head whose aging
// deadline is a timer; job 3 is backfilled; job 4 can never run; job 5 pends.
ClusterState MixedState() {
  ClusterState state = ClusterBuilder().Hosts(10, 1).Queue(Bounded(3600)).State();
  SubmitRunning(state, JobBuilder(1).Tasks(7).Limit(100), 0);
  Submit(state, JobBuilder(2).Tasks(10).Submit(5));
  Submit(state, JobBuilder(3).Tasks(2).Submit(6));
  Submit(state, JobBuilder(4).Tasks(11).Submit(7));
  Submit(state, JobBuilder(5).Tasks(3).Submit(8));
  return state;
}

TEST(DriveLoopTest, HandlerSeesEveryDecisionOnceInCycleOrder) {
  ClusterState state = MixedState();
  // The cycle the loop will run, on a copy: what the handler must see, in this order.
  const CycleResult expected =
      Scheduler().RunCycle(state.Clone(), 10, CycleOptions{.explain = true});
  std::vector<std::string> want;
  for (const Decision& decision : expected.decisions) want.push_back(LineOf(decision, 10));
  ASSERT_GE(want.size(), 4u);  // a fail, a start, an update and pends at least

  const Scheduler scheduler;
  DriveLoop loop(scheduler, state);
  RecordingHandler handler(&state);
  CycleResult result = loop.Cycle(10, CycleOptions{.explain = true}, handler);
  EXPECT_EQ(handler.calls, want);
  EXPECT_EQ(result.decisions.size(), want.size());
  // Committed before the handler ran: the start is visible, the failure too.
  EXPECT_EQ(handler.started_running, (std::vector<bool>{true}));
  EXPECT_EQ(state.FindJob(4)->state, JobState::kExit);
  EXPECT_EQ(state.FindJob(2)->admission.first_blocked, 10);
}

TEST(DriveLoopTest, KeepsTheCyclesWakeUpAndTheEarliestOfSeveral) {
  ClusterState state = MixedState();
  const Scheduler scheduler;
  DriveLoop loop(scheduler, state);
  RecordingHandler handler;
  EXPECT_FALSE(loop.wake_at().has_value());
  EXPECT_EQ(loop.NextTime(kInfinite), kInfinite);
  loop.Cycle(10, CycleOptions{}, handler);
  EXPECT_EQ(loop.wake_at(), 10 + 3600);  // the head's aging deadline
  EXPECT_EQ(loop.NextTime(kInfinite), 3610);
  EXPECT_EQ(loop.NextTime(100), 100);  // an earlier input comes first
  loop.WakeAt(5000);                   // a later wake does not replace an earlier one
  EXPECT_EQ(loop.wake_at(), 3610);
  loop.WakeAt(50);
  EXPECT_EQ(loop.wake_at(), 50);
  EXPECT_EQ(loop.NextTime(100), 50);
}

// Releasing the buffers between cycles changes no decision and keeps the pending wake-up
// (the controller releases them after a large explained cycle).
TEST(DriveLoopTest, ReleasedBuffersChangeNoDecision) {
  ClusterState kept_state = MixedState();
  ClusterState released_state = MixedState();
  const Scheduler scheduler;
  DriveLoop kept(scheduler, kept_state);
  DriveLoop released(scheduler, released_state);
  RecordingHandler kept_calls;
  RecordingHandler released_calls;
  for (Instant now : {10, 20, 3610}) {
    kept.Cycle(now, CycleOptions{.explain = true}, kept_calls);
    released.Cycle(now, CycleOptions{.explain = true}, released_calls);
    released.ReleaseBuffers();
    EXPECT_EQ(released.wake_at(), kept.wake_at());
  }
  EXPECT_EQ(released_calls.calls, kept_calls.calls);
  EXPECT_FALSE(kept_calls.calls.empty());
}

TEST(DriveLoopTest, ClearDueWakeDropsOnlyAWakeThatIsDue) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  const Scheduler scheduler;
  DriveLoop loop(scheduler, state);
  loop.WakeAt(20);
  loop.ClearDueWake(19);
  EXPECT_EQ(loop.wake_at(), 20);
  loop.ClearDueWake(20);
  EXPECT_FALSE(loop.wake_at().has_value());
  loop.WakeAt(20);
  loop.ClearDueWake(25);
  EXPECT_FALSE(loop.wake_at().has_value());
}

TEST(DriveLoopTest, ACycleConsumesAWakeDueAtItsTimeAndKeepsALaterOne) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();  // nothing to do: no wake_at
  const Scheduler scheduler;
  DriveLoop loop(scheduler, state);
  RecordingHandler handler;
  loop.WakeAt(30);
  loop.Cycle(20, CycleOptions{}, handler);
  EXPECT_EQ(loop.wake_at(), 30);
  loop.Cycle(30, CycleOptions{}, handler);
  EXPECT_FALSE(loop.wake_at().has_value());  // the cycle at 30 was the wake-up
  EXPECT_TRUE(handler.calls.empty());
}

TEST(DriveLoopTest, NoWakeAtOrBeforeTheCycleJustRun) {
  // The head's deadline has passed when the cycle runs: its gate activates now and the
  // cycle asks for no timer; the loop keeps none.
  ClusterState state = ClusterBuilder().Hosts(10, 1).Queue(Bounded(0)).State();
  SubmitRunning(state, JobBuilder(1).Tasks(7).Limit(100), 0);
  Submit(state, JobBuilder(2).Tasks(10).Submit(5));
  const Scheduler scheduler;
  DriveLoop loop(scheduler, state);
  RecordingHandler handler;
  CycleResult result = loop.Cycle(10, CycleOptions{}, handler);
  EXPECT_TRUE(!result.wake_at || *result.wake_at > 10);
  EXPECT_TRUE(!loop.wake_at() || *loop.wake_at() > 10);
  EXPECT_EQ(loop.NextTime(kInfinite), loop.wake_at().value_or(kInfinite));
}

TEST(DriveLoopTest, RequeueAtOnceSendsVictimsBackAndWakesNow) {
  ClusterState state = ClusterBuilder().Hosts(2, 1).State();
  SubmitRunning(state, JobBuilder(1).Tasks(1), 0);
  SubmitRunning(state, JobBuilder(2).Tasks(1), 0);
  const Scheduler scheduler;
  DriveLoop loop(scheduler, state);
  loop.WakeAt(500);
  const std::vector<PreemptJob> none;
  ASSERT_TRUE(loop.RequeueAtOnce(none, 40).ok());
  EXPECT_EQ(loop.wake_at(), 500);  // no victim, no extra cycle
  const std::vector<PreemptJob> victims{PreemptJob{.victim = 2, .for_job = 9, .kill_at = 40},
                                        PreemptJob{.victim = 1, .for_job = 9, .kill_at = 40}};
  ASSERT_TRUE(loop.RequeueAtOnce(victims, 40).ok());
  EXPECT_EQ(state.FindJob(1)->state, JobState::kPending);
  EXPECT_EQ(state.FindJob(2)->state, JobState::kPending);
  EXPECT_EQ(loop.wake_at(), 40);
  // A victim that is not running any more is an error of the caller's.
  EXPECT_FALSE(loop.RequeueAtOnce(victims, 41).ok());
}

TEST(DriveLoopTest, DispatchReachesTheMethodOfEveryDecision) {
  std::vector<Decision> decisions{StartJob{.job = 1},
                                  FailJob{.job = 2},
                                  PendJob{.job = 3},
                                  UpdateAdmission{.job = 4},
                                  PreemptJob{.victim = 5, .for_job = 50},
                                  DropPreemption{.for_job = 6},
                                  UpdateReclaim{.queue = 7}};
  // One alternative each: a new Decision type must get a method (Dispatch's static_assert)
  // and a line here.
  ASSERT_EQ(decisions.size(), std::variant_size_v<Decision>);
  RecordingHandler handler;
  for (Decision& decision : decisions) Dispatch(decision, 99, handler);
  EXPECT_EQ(handler.calls,
            (std::vector<std::string>{"start 1 @99", "fail 2 @99", "pend 3 @99", "update 4 @99",
                                      "preempt 5 @99", "drop 6 @99", "reclaim 7 @99"}));
}

TEST(DriveLoopTest, DefaultHandlerIgnoresEveryDecision) {
  ClusterState state = MixedState();
  const Scheduler scheduler;
  DriveLoop loop(scheduler, state);
  DecisionHandler ignore_all;
  CycleResult result = loop.Cycle(10, CycleOptions{.explain = true}, ignore_all);
  EXPECT_FALSE(result.decisions.empty());
  EXPECT_EQ(state.FindJob(3)->state, JobState::kRunning);  // committed all the same
}

}  // namespace
}  // namespace sluice::core
