// StepBroker (server/step_broker.h): orders reach the step's host once, streams are paged and
// acknowledged in order, a full output buffer pushes back, only the step's host may speak for
// it, a vanished client or an ended job gets the step killed, and read exits are forgotten.
#include "server/step_broker.h"

#include <gtest/gtest.h>

#include <thread>

#include "server/job_credential.h"

namespace sluice::server {
namespace {

using namespace std::chrono_literals;
using wire::FrameKind;
using wire::StepFrame;

wire::StepOrder Order(int64_t job, int64_t step) {
  return wire::StepOrder{.job = job, .step = step, .command = "true"};
}

StepFrame Out(std::string text) { return StepFrame::Data(FrameKind::kStdout, std::move(text)); }

StepFrame Exit(int status) {
  return StepFrame{.kind = FrameKind::kExit, .exit = {.status = status}};
}

TEST(StepBrokerTest, OrdersGoToTheStepsHostOnce) {
  StepBroker broker;
  ASSERT_TRUE(broker.Open(Order(1, 1), "h2", 0).ok());
  EXPECT_EQ(broker.Open(Order(1, 1), "h2", 0).code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(broker.HasOrders("h1"));
  EXPECT_TRUE(broker.HasOrders("h2"));
  std::vector<wire::StepOrder> orders = broker.TakeOrders("h2");
  ASSERT_EQ(orders.size(), 1u);
  EXPECT_EQ(orders[0].step, 1);
  EXPECT_TRUE(broker.TakeOrders("h2").empty());
}

TEST(StepBrokerTest, OutputIsPagedInOrderAndEndsWithTheExit) {
  StepBroker broker;
  ASSERT_TRUE(broker.Open(Order(1, 1), "h1", 0).ok());
  std::optional<StepEnd> ended;
  ASSERT_TRUE(*broker.WriteOutput("h1", 1, 1, {Out("a"), Out("b")}, ended));
  EXPECT_FALSE(ended.has_value());
  Result<wire::StepPage> page = broker.ReadOutput(1, 1, 0, 0ms, 0);
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->frames.size(), 2u);
  EXPECT_EQ(page->next, 2);
  EXPECT_FALSE(page->end);
  ASSERT_TRUE(*broker.WriteOutput("h1", 1, 1, {Out("c"), Exit(7), Out("after the end")}, ended));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->exit.status, 7);
  page = broker.ReadOutput(1, 1, 2, 0ms, 0);  // acknowledges a and b
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->frames.size(), 2u);  // c and the exit; nothing after the exit
  EXPECT_EQ(page->frames[0].data, "c");
  EXPECT_EQ(page->frames[1].kind, FrameKind::kExit);
  EXPECT_TRUE(page->end);
  // The client read the exit: the step is forgotten at the next expiry.
  broker.Expire(1);
  EXPECT_EQ(broker.ReadOutput(1, 1, 4, 0ms, 1).error().code(), StatusCode::kNotFound);
}

TEST(StepBrokerTest, AReaderWaitsForTheNextFrame) {
  StepBroker broker;
  ASSERT_TRUE(broker.Open(Order(1, 1), "h1", 0).ok());
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);
    std::optional<StepEnd> ended;
    (void)broker.WriteOutput("h1", 1, 1, {Out("late")}, ended);
  });
  Result<wire::StepPage> page = broker.ReadOutput(1, 1, 0, 10s, 0);
  writer.join();
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->frames.size(), 1u);
  EXPECT_EQ(page->frames[0].data, "late");
}

TEST(StepBrokerTest, AFullOutputBufferPushesBack) {
  StepBroker broker({.max_output_bytes = 1000});
  ASSERT_TRUE(broker.Open(Order(1, 1), "h1", 0).ok());
  std::optional<StepEnd> ended;
  ASSERT_TRUE(*broker.WriteOutput("h1", 1, 1, {Out(std::string(900, 'x'))}, ended));
  EXPECT_FALSE(*broker.WriteOutput("h1", 1, 1, {Out(std::string(200, 'y'))}, ended));
  ASSERT_TRUE(broker.ReadOutput(1, 1, 0, 0ms, 0).has_value());
  ASSERT_TRUE(broker.ReadOutput(1, 1, 1, 0ms, 0).has_value());  // acknowledged: space again
  EXPECT_TRUE(*broker.WriteOutput("h1", 1, 1, {Out(std::string(200, 'y'))}, ended));
}

TEST(StepBrokerTest, OnlyTheStepsHostSpeaksForIt) {
  StepBroker broker;
  ASSERT_TRUE(broker.Open(Order(1, 1), "h1", 0).ok());
  std::optional<StepEnd> ended;
  EXPECT_EQ(broker.WriteOutput("h2", 1, 1, {Out("forged")}, ended).error().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(broker.ReadInput("h2", 1, 1, 0, 0ms).error().code(), StatusCode::kPermissionDenied);
}

TEST(StepBrokerTest, InputReachesTheAgentAndStopsAfterTheEnd) {
  StepBroker broker;
  ASSERT_TRUE(broker.Open(Order(1, 1), "h1", 0).ok());
  ASSERT_TRUE(broker.WriteInput(1, 1, {StepFrame::Data(FrameKind::kStdin, "hello"),
                                       StepFrame{.kind = FrameKind::kSignal, .signal = 2}})
                  .ok());
  Result<wire::StepPage> page = broker.ReadInput("h1", 1, 1, 0, 0ms);
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->frames.size(), 2u);
  EXPECT_EQ(page->frames[1].signal, 2);
  std::optional<StepEnd> ended;
  ASSERT_TRUE(*broker.WriteOutput("h1", 1, 1, {Exit(0)}, ended));
  EXPECT_EQ(broker.WriteInput(1, 1, {StepFrame{.kind = FrameKind::kStdinEof}}).code(),
            StatusCode::kFailedPrecondition);
  page = broker.ReadInput("h1", 1, 1, 2, 10s);  // returns at once: the step ended
  ASSERT_TRUE(page.has_value());
  EXPECT_TRUE(page->end);
}

TEST(StepBrokerTest, AVanishedClientGetsItsStepKilled) {
  StepBroker broker({.client_grace = 1000ms});
  ASSERT_TRUE(broker.Open(Order(1, 1), "h1", 0).ok());
  ASSERT_TRUE(broker.Open(Order(1, 2), "h2", 0).ok());
  ASSERT_TRUE(broker.ReadOutput(1, 2, 0, 0ms, 900).has_value());  // step 2's client is here
  EXPECT_TRUE(broker.Expire(999).empty());
  EXPECT_EQ(broker.Expire(1001), std::set<std::string>{"h1"});
  std::vector<wire::StepKill> kills = broker.TakeKills("h1");
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].step, 1);
  EXPECT_TRUE(broker.TakeKills("h2").empty());
}

TEST(StepBrokerTest, AnEndedJobKillsItsStepsAndDropsItsOrders) {
  StepBroker broker;
  ASSERT_TRUE(broker.Open(Order(1, 1), "h1", 0).ok());
  (void)broker.TakeOrders("h1");
  ASSERT_TRUE(broker.Open(Order(1, 2), "h2", 0).ok());  // not taken yet
  ASSERT_TRUE(broker.Open(Order(2, 1), "h2", 0).ok());  // another job
  EXPECT_EQ(broker.KillJob(1), (std::set<std::string>{"h1", "h2"}));
  std::vector<wire::StepKill> kills = broker.TakeKills("h1");
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].step, 0);  // every step of the job there
  std::vector<wire::StepOrder> orders = broker.TakeOrders("h2");
  ASSERT_EQ(orders.size(), 1u);
  EXPECT_EQ(orders[0].job, 2);
}

TEST(StepBrokerTest, AHostsReRegistrationEndsItsLiveStepsForTheirClients) {
  StepBroker broker;
  ASSERT_TRUE(broker.Open(Order(1, 1), "h1", 0).ok());
  ASSERT_TRUE(broker.Open(Order(1, 2), "h2", 0).ok());
  broker.FailHost("h1", "the agent restarted");
  Result<wire::StepPage> page = broker.ReadOutput(1, 1, 0, 0ms, 0);
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->frames.size(), 1u);
  EXPECT_EQ(page->frames[0].exit.status, 255);
  EXPECT_EQ(page->frames[0].exit.error, "the agent restarted");
  EXPECT_TRUE(page->end);
  EXPECT_FALSE(broker.HasOrders("h1"));  // its pending order went with it
  page = broker.ReadOutput(1, 2, 0, 0ms, 0);  // the other host's step lives on
  ASSERT_TRUE(page.has_value());
  EXPECT_TRUE(page->frames.empty());
}

TEST(StepBrokerTest, TheNumberOfStepsIsBounded) {
  StepBroker broker({.max_steps = 2});
  ASSERT_TRUE(broker.Open(Order(1, 1), "h1", 0).ok());
  ASSERT_TRUE(broker.Open(Order(1, 2), "h1", 0).ok());
  EXPECT_EQ(broker.Open(Order(1, 3), "h1", 0).code(), StatusCode::kResourceExhausted);
}

TEST(JobCredentialsTest, ACredentialNamesOneRunOfOneJob) {
  JobCredentials credentials;
  credentials.SetKey(std::string(32, 'k'));
  const std::string issued = credentials.Issue(12, 1700000000);
  Result<JobCredentialClaim> claim = credentials.Verify(issued);
  ASSERT_TRUE(claim.has_value());
  EXPECT_EQ(claim->job, 12);
  EXPECT_EQ(claim->start_time, 1700000000);
  // Another job's number or another run with the same MAC, a changed MAC, another key: refused.
  const std::string mac = issued.substr(issued.rfind('.'));
  EXPECT_FALSE(credentials.Verify("13.1700000000" + mac).has_value());
  EXPECT_FALSE(credentials.Verify("12.1700000001" + mac).has_value());
  std::string flipped = issued;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  EXPECT_FALSE(credentials.Verify(flipped).has_value());
  JobCredentials other;
  other.SetKey(std::string(32, 'o'));
  EXPECT_FALSE(other.Verify(issued).has_value());
  for (const char* bad : {"", "12", "12.x.00", "..", "12.1700000000."}) {
    EXPECT_FALSE(credentials.Verify(bad).has_value()) << bad;
  }
  EXPECT_FALSE(JobCredentials().Verify(issued).has_value());  // no key: nothing is valid
}

}  // namespace
}  // namespace sluice::server
