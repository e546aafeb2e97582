// Job states and admission phases as the API and the store spell them (job_state.h).
#include "server/job_state.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace sluice::server {
namespace {

TEST(JobStateTest, EveryStateHasItsOwnTextAndParsesBack) {
  std::set<std::string> texts;
  for (JobState state : kAllJobStates) {
    const std::string text(ToString(state));
    EXPECT_NE(text, "UNKNOWN");
    EXPECT_TRUE(texts.insert(text).second) << text;
    EXPECT_EQ(ParseJobState(text), state) << text;
  }
  EXPECT_EQ(texts, (std::set<std::string>{"PENDING", "HELD", "ADMITTING", "RUNNING", "DONE", "EXIT",
                                          "CANCELLED"}));
  // The table lists every enumerator (kCancelled is the last).
  EXPECT_EQ(std::size(kAllJobStates), static_cast<size_t>(JobState::kCancelled) + 1);
}

TEST(JobStateTest, EveryPhaseParsesBack) {
  std::set<std::string> texts;
  for (core::AdmissionPhase phase : kAllAdmissionPhases) {
    const std::string text(core::ToString(phase));
    EXPECT_TRUE(texts.insert(text).second) << text;
    EXPECT_EQ(ParseAdmissionPhase(text), phase) << text;
  }
  EXPECT_EQ(texts, (std::set<std::string>{"PENDING", "ADMITTING", "ADMITTED", "ENDED"}));
  EXPECT_EQ(std::size(kAllAdmissionPhases), static_cast<size_t>(core::AdmissionPhase::kEnded) + 1);
}

TEST(JobStateTest, OtherTextParsesToNothing) {
  EXPECT_EQ(ParseJobState("pending"), std::nullopt);
  EXPECT_EQ(ParseJobState(""), std::nullopt);
  EXPECT_EQ(ParseAdmissionPhase("RUNNING"), std::nullopt);
}

TEST(JobStateTest, WaitingAndEndedStates) {
  EXPECT_TRUE(IsWaiting(JobState::kPending));
  EXPECT_TRUE(IsWaiting(JobState::kHeld));
  EXPECT_FALSE(IsWaiting(JobState::kAdmitting));
  EXPECT_EQ(CoreEndedState(JobState::kDone), core::JobState::kDone);
  EXPECT_EQ(CoreEndedState(JobState::kCancelled), core::JobState::kCancelled);
  EXPECT_EQ(CoreEndedState(JobState::kExit), core::JobState::kExit);
}

}  // namespace
}  // namespace sluice::server
