// `sluice cancel --signal` (issue 47): the controller checks a signal and sends it, once, to
// the agent of every host of each running job it names; the jobs' states do not change.
#include <gtest/gtest.h>

#include "base/array_ids.h"
#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::LaunchedIds;

// The signal orders of a heartbeat reply, as (job, name).
std::vector<std::pair<JobId, std::string>> SignalsIn(const json& reply) {
  std::vector<std::pair<JobId, std::string>> out;
  for (const json& order : reply.value("signal", json::array())) {
    out.emplace_back(order["job"].get<JobId>(), order["signal"].get<std::string>());
  }
  return out;
}

class JobSignalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open();
    ASSERT_EQ(h_->Register("h1").status, 200);
    ASSERT_EQ(h_->Register("h2").status, 200);
  }

  // Submits `body` as alice and runs what it starts: every host reports its launches running.
  JobId SubmitAndRun(json body) {
    const JobId id = h_->Submit("alice", std::move(body));
    h_->Cycle();
    for (const char* host : {"h1", "h2"}) {
      for (JobId launched : LaunchedIds(h_->Heartbeat(host))) running_[host].push_back(launched);
      h_->Heartbeat(host, running_[host]);
    }
    return id;
  }

  Reply Signal(const std::string& user, JobId id, const std::string& signal,
               std::optional<std::pair<int32_t, int32_t>> range = std::nullopt) {
    return h_->c().Signal(Caller{.user = user, .admin = user == "root"}, id, range, signal);
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
  std::map<std::string, json> running_{{"h1", json::array()}, {"h2", json::array()}};
};

TEST_F(JobSignalTest, GoesOnceToEveryHostOfTheRunningJob) {
  const JobId id = SubmitAndRun({{"command", "sleep 60"}, {"tasks", 6}});  // 4 + 2 slots
  ASSERT_EQ(h_->State(id), "RUNNING") << h_->Job(id);
  const Reply r = Signal("alice", id, "sigusr1");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["signal"], "USR1");
  EXPECT_EQ(r.body["signalled"], 1);
  const std::vector<std::pair<JobId, std::string>> want{{id, "USR1"}};
  const json reply = h_->Heartbeat("h1", running_["h1"]);
  EXPECT_EQ(SignalsIn(reply), want);
  ASSERT_TRUE(reply.contains("signal"));
  EXPECT_NE(reply["signal"][0].value("run", uint64_t{0}), 0u) << "for this run only";
  EXPECT_EQ(SignalsIn(h_->Heartbeat("h2", running_["h2"])), want);
  EXPECT_TRUE(SignalsIn(h_->Heartbeat("h1", running_["h1"])).empty()) << "sent twice";
  EXPECT_EQ(h_->State(id), "RUNNING");
  EXPECT_NE(h_->log().find("signal USR1 by alice (to h1,h2)"), std::string::npos) << h_->log();
}

TEST_F(JobSignalTest, OnlyARunningJobOfTheCallerWithAKnownSignal) {
  const JobId id = SubmitAndRun({{"command", "sleep 60"}, {"tasks", 1}});
  const JobId waits = h_->Submit("alice", {{"command", "x"}, {"tasks", 1}, {"hold", true}});
  EXPECT_EQ(Signal("bob", id, "USR1").status, 403);
  EXPECT_EQ(Signal("root", id, "USR1").status, 200);  // an administrator
  EXPECT_EQ(Signal("alice", id, "SEGV").status, 400);
  EXPECT_EQ(Signal("alice", id, "10").status, 400) << "a number is the client's to translate";
  EXPECT_EQ(Signal("alice", 999, "USR1").status, 404);
  const Reply pending = Signal("alice", waits, "USR1");
  EXPECT_EQ(pending.status, 409);
  EXPECT_NE(pending.body.dump().find("only a running job can be signalled"), std::string::npos)
      << pending.body.dump();
  EXPECT_EQ(Signal("alice", id, "USR1", std::pair(1, 1)).status, 400) << "not an array";
}

// An order not yet taken is dropped when the host's agent registers again: the run it was for
// did not survive (a later run of the job there must not get it).
TEST_F(JobSignalTest, AnOrderIsDroppedWhenTheAgentRegistersAgain) {
  const JobId id = SubmitAndRun({{"command", "sleep 60"}, {"tasks", 1}});
  ASSERT_EQ(Signal("alice", id, "TERM").status, 200);
  ASSERT_EQ(h_->Register("h1", running_["h1"]).status, 200);
  EXPECT_TRUE(SignalsIn(h_->Heartbeat("h1", running_["h1"])).empty());
}

TEST_F(JobSignalTest, AnArraysRunningElementsInTheRange) {
  const JobId array = SubmitAndRun({{"command", "sleep 60"}, {"array", "1-3"}, {"tasks", 1}});
  const Reply r = Signal("alice", array, "TERM", std::pair(2, 3));
  ASSERT_EQ(r.status, 200) << r.body.dump() << h_->Job(array);
  EXPECT_EQ(r.body["signalled"], 2);
  std::set<JobId> signalled;
  for (const char* host : {"h1", "h2"}) {
    for (const auto& [job, name] : SignalsIn(h_->Heartbeat(host, running_[host]))) {
      EXPECT_EQ(name, "TERM");
      signalled.insert(job);
    }
  }
  EXPECT_EQ(signalled, (std::set<JobId>{ArrayElementId(array, 2), ArrayElementId(array, 3)}));
  EXPECT_EQ(Signal("alice", array, "TERM", std::pair(7, 9)).status, 409);
}

}  // namespace
}  // namespace sluice::server
