// Server support in ClusterState (R-SRV-2): Restore keeps a stored job's sequence and
// admission record, Requeue puts a running job back at its sequence, SetHeld toggles HELD.
#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;

std::vector<JobId> PendingOrder(const ClusterState& state) {
  std::vector<JobId> ids;
  for (const PendingEntry& e : state.topology().queues()[0].pending) ids.push_back(e.job->spec.id);
  return ids;
}

TEST(ClusterStateRestoreTest, RestoreKeepsSequenceAndRecord) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  AdmissionRecord record{.enqueue_time = 5,
                         .phase = AdmissionPhase::kAdmitting,
                         .bypass_count = 3,
                         .first_blocked = 7,
                         .gate_since = 9,
                         .epoch = 2};
  ASSERT_TRUE(state.Restore(JobBuilder(20).Build(), 40, record).ok());
  ASSERT_TRUE(state.Restore(JobBuilder(10).Build(), 12, AdmissionRecord{}).ok());
  EXPECT_EQ(PendingOrder(state), (std::vector<JobId>{10, 20}));
  const Job* job = state.FindJob(20);
  EXPECT_EQ(job->seq, 40u);
  EXPECT_EQ(job->admission.bypass_count, 3);
  EXPECT_EQ(job->admission.first_blocked, 7);
  EXPECT_EQ(job->admission.gate_since, 9);
  EXPECT_EQ(job->admission.phase, AdmissionPhase::kPending);
  // A new submission goes after every restored sequence.
  ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(30).Build()}, 0, state).ok());
  EXPECT_EQ(state.FindJob(30)->seq, 41u);
  EXPECT_EQ(PendingOrder(state), (std::vector<JobId>{10, 20, 30}));
}

TEST(ClusterStateRestoreTest, RestoreRefusesATakenSequence) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  ASSERT_TRUE(state.Restore(JobBuilder(1).Build(), 4, AdmissionRecord{}).ok());
  EXPECT_EQ(state.Restore(JobBuilder(2).Build(), 4, AdmissionRecord{}).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(PendingOrder(state), (std::vector<JobId>{1}));
}

TEST(ClusterStateRestoreTest, RequeueReturnsAJobToItsPlaceAndReleasesSlots) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  for (JobId id = 1; id <= 3; ++id) {
    ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(id).Build()}, 0, state).ok());
  }
  Scheduler scheduler;
  Commit(scheduler.RunCycle(state, 1), 1, state);
  ASSERT_EQ(state.FindJob(1)->state, JobState::kRunning);
  ASSERT_EQ(state.topology().free_slots(), 0);
  ASSERT_TRUE(state.Requeue(1).ok());
  EXPECT_EQ(state.FindJob(1)->state, JobState::kPending);
  EXPECT_EQ(state.topology().free_slots(), 1);
  EXPECT_EQ(state.topology().hosts()[0].used_slots, 1);
  EXPECT_EQ(PendingOrder(state), (std::vector<JobId>{1, 3}));
  EXPECT_EQ(state.Requeue(1).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(state.Requeue(99).code(), StatusCode::kNotFound);
  // It runs again from the head.
  Commit(scheduler.RunCycle(state, 2), 2, state);
  EXPECT_EQ(state.FindJob(1)->state, JobState::kRunning);
  EXPECT_EQ(state.FindJob(3)->state, JobState::kPending);
}

TEST(ClusterStateRestoreTest, HoldAndReleaseKeepThePlace) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  for (JobId id = 1; id <= 2; ++id) {
    ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(id).Build()}, 0, state).ok());
  }
  ASSERT_TRUE(state.SetHeld(1, true).ok());
  EXPECT_EQ(state.FindJob(1)->state, JobState::kHeld);
  EXPECT_EQ(state.SetHeld(1, true).code(), StatusCode::kFailedPrecondition);
  Scheduler scheduler;
  Commit(scheduler.RunCycle(state, 1), 1, state);
  EXPECT_EQ(state.FindJob(2)->state, JobState::kRunning);
  ASSERT_TRUE(state.SetHeld(1, false).ok());
  EXPECT_EQ(state.FindJob(1)->state, JobState::kPending);
  EXPECT_EQ(PendingOrder(state), (std::vector<JobId>{1}));
}

}  // namespace
}  // namespace sluice::core
