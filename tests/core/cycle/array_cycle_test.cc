// Job arrays in the core (R-UX-3): elements start in index order as jobs ID[INDEX], the
// `%N` cap holds the rest with ARRAY_LIMIT, only the elements that could start soon are
// Jobs, dependencies name arrays and elements, and ranges are cancelled and held.
#include <gtest/gtest.h>

#include "base/array_ids.h"
#include "core/cycle/events.h"
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

JobId E(JobId array, int32_t index) { return ArrayElementId(array, index); }

void SubmitArray(ClusterState& state, const JobSpec& spec, const std::string& array) {
  Status status = Apply(JobSubmitted{spec, array}, spec.submit_time, state);
  ASSERT_TRUE(status.ok()) << status.ToString();
}

void Finish(ClusterState& state, JobId id, Instant now, int32_t code = 0) {
  Status status = Apply(JobFinished{.job = id, .exit_code = code}, now, state);
  ASSERT_TRUE(status.ok()) << status.ToString();
}

TEST(ArrayCycleTest, ElementsStartInIndexOrderAheadOfLaterJobs) {
  ClusterState state = ClusterBuilder().Hosts(1, 3).State();
  SubmitArray(state, JobBuilder(1), "5,2,9-10");
  Submit(state, JobBuilder(2));
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{E(1, 2), E(1, 5), E(1, 9)}));
  // Element 10 is the blocked fifo head: job 2, submitted later, waits behind it.
  EXPECT_EQ(ReasonsOf(result, E(1, 10))->main, ReasonCode::kNoResource);
  EXPECT_EQ(ReasonsOf(result, 2)->main, ReasonCode::kPriorityWait);
  Finish(state, E(1, 2), 5);
  EXPECT_EQ(Started(CycleAndCommit(state, 5)), (std::vector<JobId>{E(1, 10)}));
}

TEST(ArrayCycleTest, TheCapHoldsTheRestWithArrayLimitAndDoesNotBlockTheQueue) {
  ClusterState state = ClusterBuilder().Hosts(1, 8).State();
  SubmitArray(state, JobBuilder(1), "1-6%2");
  Submit(state, JobBuilder(2));
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{E(1, 1), E(1, 2), 2}));
  std::optional<PendingReasons> reasons = ReasonsOf(result, E(1, 3));
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kArrayLimit);
  EXPECT_EQ(reasons->details[0].used, 2);
  EXPECT_EQ(reasons->details[0].max, 2);
  EXPECT_EQ(reasons->details[0].scope, "array 1");
  // Nothing more starts until an element ends; then exactly one, the next index.
  EXPECT_TRUE(Started(CycleAndCommit(state, 1)).empty());
  Finish(state, E(1, 2), 2);
  EXPECT_EQ(Started(CycleAndCommit(state, 2)), (std::vector<JobId>{E(1, 3)}));
}

TEST(ArrayCycleTest, OnlyTheElementsThatCouldStartAreJobs) {
  ClusterState state = ClusterBuilder().Hosts(1, 4).State();
  SubmitArray(state, JobBuilder(1), "1-100000");
  // 4 free slots: 4 elements could start, a fifth stands for the rest.
  EXPECT_EQ(state.job_count(), 5);
  EXPECT_EQ(state.FindArray(1)->waiting, 100000 - 5);
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(result).size(), 4u);
  EXPECT_EQ(state.job_count(), 5);  // the cluster is full: one pending element is enough
  // The cycle explained one pending Job, not 99,996.
  size_t pends = 0;
  for (const Decision& d : result.decisions) pends += std::holds_alternative<PendJob>(d);
  EXPECT_EQ(pends, 1u);
}

TEST(ArrayCycleTest, CancelHoldAndReleaseTakeTheArrayAnElementOrARange) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  SubmitArray(state, JobBuilder(1), "1-10");
  CycleAndCommit(state, 0);  // elements 1 and 2 run
  ASSERT_TRUE(Apply(ArrayElementsCancelled{.array = 1, .first = 2, .last = 5}, 1, state).ok());
  EXPECT_EQ(state.ElementStateOf(E(1, 2)), JobState::kCancelled);  // running: killed
  EXPECT_EQ(state.ElementStateOf(E(1, 5)), JobState::kCancelled);  // never a Job
  ASSERT_TRUE(Apply(JobHeld{.job = E(1, 6)}, 1, state).ok());
  EXPECT_EQ(Started(CycleAndCommit(state, 1)), (std::vector<JobId>{E(1, 7)}));
  ASSERT_TRUE(Apply(ArrayElementsHeld{.array = 1, .first = 0, .last = 100}, 2, state).ok());
  Finish(state, E(1, 1), 3);
  EXPECT_TRUE(Started(CycleAndCommit(state, 3)).empty());
  ASSERT_TRUE(Apply(JobReleased{.job = 1}, 4, state).ok());
  EXPECT_EQ(Started(CycleAndCommit(state, 4)), (std::vector<JobId>{E(1, 6)}));
  ASSERT_TRUE(Apply(JobCancelled{.job = 1}, 5, state).ok());
  const JobArray& array = *state.FindArray(1);
  EXPECT_EQ(array.ended(), array.size());
  EXPECT_EQ(array.done, 1);
  // Nothing left to cancel: refused, nothing changes.
  EXPECT_EQ(Apply(JobCancelled{.job = 1}, 6, state).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Apply(JobCancelled{.job = E(1, 99)}, 6, state).code(), StatusCode::kNotFound);
}

TEST(ArrayCycleTest, DoneOfTheArrayWaitsForEveryElementAndDoneOfAnElementForOne) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  SubmitArray(state, JobBuilder(1), "1-3");
  Submit(state, JobBuilder(2).Depend("done(1)"));
  Submit(state, JobBuilder(3).Depend("done(1[3])"));
  EXPECT_EQ(Apply(JobSubmitted{JobBuilder(4).Depend("done(1[7])")}, 0, state).code(),
            StatusCode::kNotFound);
  CycleResult first = CycleAndCommit(state, 0);
  EXPECT_EQ(ReasonsOf(first, 2)->main, ReasonCode::kDependency);
  EXPECT_EQ(ReasonsOf(first, 3)->details[0].condition, "done(1[3])");
  Finish(state, E(1, 1), 1);
  Finish(state, E(1, 2), 1);
  EXPECT_EQ(Started(CycleAndCommit(state, 1)), (std::vector<JobId>{E(1, 3)}));
  Finish(state, E(1, 3), 2);
  EXPECT_EQ(Started(CycleAndCommit(state, 2)), (std::vector<JobId>{2, 3}));
}

TEST(ArrayCycleTest, ANonZeroExitOfOneElementMakesDoneOfTheArrayNever) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  SubmitArray(state, JobBuilder(1), "1-2");
  Submit(state, JobBuilder(2).Depend("done(1)"));
  Submit(state, JobBuilder(3).Depend("ended(1)"));
  CycleAndCommit(state, 0);
  Finish(state, E(1, 1), 1, /*code=*/3);
  Finish(state, E(1, 2), 1);
  CycleResult result = CycleAndCommit(state, 1);
  EXPECT_TRUE(ReasonsOf(result, 2)->details[0].never);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
}

TEST(ArrayCycleTest, ABadArraySpecIsRefused) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  EXPECT_EQ(Apply(JobSubmitted{JobBuilder(1), "3-1"}, 0, state).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(state.FindArray(1), nullptr);
}

TEST(ArrayCycleTest, ARestoredArrayKeepsItsElementsStatesAndOrder) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  JobSpec spec = JobBuilder(7);
  // Element 1 ended, 2 was running (restored as a Job), 3 held, 4 waiting.
  ASSERT_TRUE(Apply(ArrayRestored{.spec = spec,
                                  .array = "1-4",
                                  .base_seq = 10,
                                  .states = {ElementState::kDone, ElementState::kQueued,
                                             ElementState::kHeld, ElementState::kWaiting}},
                    0, state)
                  .ok());
  JobSpec element = spec;
  element.id = E(7, 2);
  ASSERT_TRUE(Apply(JobRestored{.spec = element, .seq = 11}, 0, state).ok());
  ASSERT_TRUE(
      Apply(AllocationRestored{.job = E(7, 2), .allocation = {.hosts = {{0, 1}}}}, 0, state).ok());
  EXPECT_EQ(state.FindArray(7)->active, 1);
  Finish(state, E(7, 2), 1);
  EXPECT_EQ(Started(CycleAndCommit(state, 1)), (std::vector<JobId>{E(7, 4)}));
  EXPECT_EQ(state.ElementStateOf(E(7, 3)), JobState::kHeld);
  EXPECT_EQ(state.ElementStateOf(E(7, 1)), JobState::kDone);
}

}  // namespace
}  // namespace sluice::core
