// The controller's side of the user's daily verbs (SPEC §13): refusal of impossible jobs at
// submission (R-UX-2), job scripts stored and launched (R-UX-1), per-host detail in the job
// detail (R-UX-4) and peek orders through heartbeats (R-UX-5); driven without sockets.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "server/controller.h"
#include "server/http_reply.h"
#include "server/controller_fixture.h"
#include "testing/wait.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;

class UserVerbsControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open();
  }
  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
};

TEST_F(UserVerbsControllerTest, AnImpossibleJobIsRefusedWith422AndTakesNoId) {
  Reply refused = h_->c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"tasks", 100}});
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(refused.body["cause"]["reason"], "UNSCHEDULABLE");
  EXPECT_EQ(refused.body["cause"]["queue"], "normal");
  EXPECT_FALSE(refused.body["cause"]["details"].empty()) << refused.body.dump();
  EXPECT_NE(refused.body["error"].get<std::string>().find("8"), std::string::npos);
  // Just above what the hosts hold: refused too.
  EXPECT_EQ(Reply(h_->c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"tasks", 9}})).status,
            422);
  Reply batch = h_->c().SubmitBatch(
      Caller{.user = "alice"},
      {{"jobs", json::array({{{"command", "true"}}, {{"command", "true"}, {"tasks", 64}}})}});
  EXPECT_EQ(batch.status, 422);
  EXPECT_EQ(batch.body["cause"]["index"], 1);
  EXPECT_TRUE(batch.body["error"].get<std::string>().starts_with("jobs[1]: "));
  EXPECT_TRUE(Reply(h_->c().ListJobs({})).Json().empty());
  EXPECT_EQ(h_->Submit("alice", {{"command", "true"}}), 1);  // no id was taken
  EXPECT_NE(h_->c().Metrics().find("sluice_unschedulable_total{queue=\"normal\"} 3"),
            std::string::npos);
}

TEST_F(UserVerbsControllerTest, AScriptIsStoredAndLaunchedWithItsArguments) {
  ASSERT_EQ(h_->Register("h1").status, 200);
  ASSERT_EQ(h_->Register("h2").status, 200);
  const JobId id = h_->Submit(
      "alice", {{"script", "#!/bin/sh\necho $1\n"}, {"command", json::array({"job.sh", "x"})}});
  EXPECT_EQ(h_->Job(id)["command"], "job.sh x");
  EXPECT_EQ(h_->Job(id)["script_bytes"], 18);
  h_->Cycle();
  json hb = h_->Heartbeat("h1");
  if (hb["launch"].empty()) hb = h_->Heartbeat("h2");
  ASSERT_EQ(hb["launch"].size(), 1u) << hb.dump();
  EXPECT_EQ(hb["launch"][0]["script"], "#!/bin/sh\necho $1\n");
  EXPECT_EQ(hb["launch"][0]["argv"], json::array({"job.sh", "x"}));
  // Survives a restart (the script is in the stored spec).
  h_->Close();
  h_->Open();
  EXPECT_EQ(h_->Job(id)["script_bytes"], 18);
  // Malformed scripts name the field.
  EXPECT_EQ(Reply(h_->c().Submit(Caller{.user = "alice"}, {{"script", 3}})).status, 400);
  EXPECT_EQ(Reply(h_->c().Submit(Caller{.user = "alice"}, {{"script", "x"}, {"command", "a"}})).status,
            400);
  EXPECT_EQ(
      Reply(h_->c().Submit(Caller{.user = "alice"}, {{"script", std::string((1 << 20) + 1, 'x')}})).status,
      413);
}

TEST_F(UserVerbsControllerTest, AWaitingJobsDetailHasPerHostVerdicts) {
  ASSERT_EQ(h_->Register("h1").status, 200);
  ASSERT_EQ(h_->Register("h2").status, 200);
  const JobId big = h_->Submit("alice", {{"command", "sleep 9"}, {"tasks", 8}});
  const JobId waits = h_->Submit("alice", {{"command", "true"}, {"tasks", 2}});
  h_->Cycle();
  h_->Cycle();
  json detail = h_->Job(waits);
  ASSERT_TRUE(detail["reasons"].is_object()) << detail.dump();
  ASSERT_EQ(detail["reasons"]["hosts"].size(), 2u) << detail.dump();
  EXPECT_EQ(detail["reasons"]["hosts"][0]["host"], "h1");
  (void)big;
}

TEST_F(UserVerbsControllerTest, PeekGoesToTheJobsAgentAndBack) {
  ASSERT_EQ(h_->Register("h1").status, 200);
  ASSERT_EQ(h_->Register("h2").status, 200);
  const JobId id = h_->Submit("alice", {{"command", "sleep 9"}, {"tasks", 4}, {"output", "/o"}});
  h_->Cycle();
  json hb = h_->Heartbeat("h1");
  const std::string host = hb["launch"].empty() ? "h2" : "h1";
  h_->Heartbeat(host, {id});
  ASSERT_EQ(h_->State(id), "RUNNING");
  EXPECT_EQ(Reply(h_->c().Peek(Caller{.user = "bob"}, id, 5, std::nullopt)).status, 403);
  auto answer = std::async(std::launch::async, [&] {
    return h_->c().Peek(Caller{.user = "alice"}, id, 5, std::nullopt);
  });
  // The agent's poll carries the order; its next heartbeat the answer.
  json order;
  ASSERT_TRUE(::sluice::testing::Eventually([&] {
    json reply = h_->Heartbeat(host, {id});
    if (reply.contains("peek")) order = reply["peek"][0];
    return !order.is_null();
  })) << "no heartbeat carried the peek order";
  EXPECT_EQ(order["job"], id);
  EXPECT_EQ(order["lines"], 5);
  Reply sent = h_->c().Heartbeat(host, {{"epoch", h_->c().epoch()},
                                        {"running", {id}},
                                        {"peeks", json::array({{{"id", order["id"]},
                                                                {"job", id},
                                                                {"text", "tail\n"},
                                                                {"offset", 10},
                                                                {"size", 15}}})}});
  EXPECT_EQ(sent.status, 200);
  Reply peeked = answer.get();
  EXPECT_EQ(peeked.status, 200) << peeked.body.dump();
  EXPECT_EQ(peeked.body["text"], "tail\n");
  EXPECT_EQ(peeked.body["size"], 15);
  EXPECT_EQ(peeked.body["host"], host);
  EXPECT_EQ(Reply(h_->c().Peek(Caller{.user = "alice"}, 99, 5, std::nullopt)).status, 404);
}

}  // namespace
}  // namespace sluice::server
