// Exactly once, the controller's side (issue 19): a restarted agent lists the jobs whose exits
// it has not had acknowledged as still held when it registers, then reports them: the job
// ends DONE once and is not requeued; a job its agent killed in a self-fence (cause `fenced`)
// is handled like a host loss (requeued by on_host_loss), not ended as the job's own exit.
#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::LaunchedIds;

class AgentRestartReportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open();
    ASSERT_EQ(h_->Register("h1").status, 200);
    ASSERT_EQ(h_->Register("h2").status, 200);
    id_ = h_->Submit("alice", {{"command", "true"}, {"tasks", 1}});
    h_->Cycle();
    std::string host;
    for (const std::string name : {"h1", "h2"}) {
      if (!LaunchedIds(h_->Heartbeat(name)).empty()) host = name;
    }
    ASSERT_FALSE(host.empty()) << h_->Job(id_);
    host_ = host;
    h_->Heartbeat(host_, {id_});
    ASSERT_EQ(h_->State(id_), "RUNNING");
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
  JobId id_ = 0;
  std::string host_;
};

TEST_F(AgentRestartReportsTest, AHeldJobReportedAfterTheRegistrationEndsDoneOnce) {
  // The agent restarted: it lists the job (its exit is in its journal) and reports the exit
  // one heartbeat later (reports are chunked).
  ASSERT_EQ(h_->Register(host_, {id_}).status, 200);
  h_->Heartbeat(host_);
  EXPECT_EQ(h_->State(id_), "RUNNING") << "requeued before its report arrived";
  EXPECT_EQ(h_->Heartbeat(host_, json::array(), Exited(id_, 0))["ack"], json::array({id_}));
  EXPECT_EQ(h_->State(id_), "DONE");
  // The report again (an acknowledgement lost with a crash): acknowledged, nothing changes.
  EXPECT_EQ(h_->Heartbeat(host_, json::array(), Exited(id_, 3))["ack"], json::array({id_}));
  EXPECT_EQ(h_->Job(id_)["exit_code"], 0);
  h_->Cycle();
  for (const std::string name : {"h1", "h2"}) EXPECT_TRUE(LaunchedIds(h_->Heartbeat(name)).empty());
}

TEST_F(AgentRestartReportsTest, AFencedJobIsRequeuedLikeAHostLoss) {
  json reply = h_->Heartbeat(host_, json::array(), Exited(id_, 128 + 15, "fenced"));
  EXPECT_EQ(reply["ack"], json::array({id_}));
  EXPECT_EQ(h_->State(id_), "PENDING") << h_->Job(id_);
  h_->Cycle();
  bool relaunched = false;
  for (const std::string name : {"h1", "h2"}) {
    for (JobId id : LaunchedIds(h_->Heartbeat(name))) relaunched = relaunched || id == id_;
  }
  EXPECT_TRUE(relaunched) << h_->Job(id_);
}

}  // namespace
}  // namespace sluice::server
