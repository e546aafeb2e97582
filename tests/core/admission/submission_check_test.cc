// Refusal at submission (R-UX-2): SubmissionCheck says why a job could never run, with the
// same words the cycle's classification gives, without entering the job anywhere.
#include "core/admission/submission_check.h"

#include <gtest/gtest.h>

#include "core/alloc/resreq_allocator.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;

TEST(SubmissionCheckTest, TooManyTasksNamesTheNeedAndTheCapacity) {
  ClusterState state = ClusterBuilder().Hosts(2, 8).State();
  ResreqAllocator allocator;
  SubmissionCheck check(state, allocator);
  std::optional<NeverRunnable> never = check.Check(JobBuilder(1).Tasks(100));
  ASSERT_TRUE(never.has_value());
  EXPECT_NE(never->message.find("100"), std::string::npos) << never->message;
  EXPECT_NE(never->message.find("16"), std::string::npos) << never->message;
  ASSERT_FALSE(never->reasons.details.empty());
  EXPECT_EQ(never->reasons.main, ReasonCode::kNoResource);
  EXPECT_EQ(state.FindJob(1), nullptr);  // nothing entered
}

TEST(SubmissionCheckTest, AJobThatFitsSomedayIsNotRefusedEvenWhenTheClusterIsFull) {
  ClusterState state = ClusterBuilder().Hosts(2, 8).State();
  testing::Submit(state, JobBuilder(1).Tasks(16));
  ResreqAllocator allocator;
  SubmissionCheck check(state, allocator);
  EXPECT_FALSE(check.Check(JobBuilder(2).Tasks(16)).has_value());
  EXPECT_FALSE(check.Check(JobBuilder(3).Tasks(1)).has_value());
}

TEST(SubmissionCheckTest, SameWordsAsTheCyclesClassification) {
  ClusterState state = ClusterBuilder().Hosts(2, 8).State();
  ResreqAllocator allocator;
  std::optional<NeverRunnable> never =
      SubmissionCheck(state, allocator).Check(JobBuilder(1).Tasks(20));
  ASSERT_TRUE(never.has_value());
  testing::Submit(state, JobBuilder(1).Tasks(20));
  CycleResult result = Scheduler().RunCycle(state, 0);
  ASSERT_EQ(result.decisions.size(), 1u);
  const auto* fail = std::get_if<FailJob>(&result.decisions[0]);
  ASSERT_NE(fail, nullptr);
  EXPECT_EQ(fail->message, never->message);
}

TEST(SubmissionCheckTest, PolicyMaximaAreChecked) {
  QueueSpec queue;
  queue.name = "small";
  queue.slot_limit = 4;
  ClusterState state = ClusterBuilder().Hosts(2, 8).Queue(queue).State();
  ResreqAllocator allocator;
  SubmissionCheck check(state, allocator);
  std::optional<NeverRunnable> never = check.Check(JobBuilder(1).Tasks(6).Queue("small"));
  ASSERT_TRUE(never.has_value());
  EXPECT_TRUE(never->reasons.details.empty());
  EXPECT_NE(never->message.find("slot_limit"), std::string::npos) << never->message;
}

TEST(SubmissionCheckTest, UnknownQueuesAndBadRequestsAreLeftToTheSubmissionsOwnChecks) {
  ClusterState state = ClusterBuilder().Hosts(1, 4).State();
  ResreqAllocator allocator;
  SubmissionCheck check(state, allocator);
  EXPECT_FALSE(check.Check(JobBuilder(1).Queue("nope")).has_value());
  EXPECT_FALSE(check.Check(JobBuilder(2).ResReq("select[")).has_value());
}

}  // namespace
}  // namespace sluice::core
