// A job's record keeps only a compact view of its spec (job_book.h, issue 45); the rest is
// read from the spec's text when needed, and on SQLite that text is read from the store once
// stored. What the job was submitted with (or modified to) must reach its agent and the API
// unchanged, before and after a restart.
#include <gtest/gtest.h>

#include "server/controller.h"
#include "server/controller_fixture.h"
#include "server/http_reply.h"
#include "testing/state_database.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::LaunchedIds;

constexpr const char* kScript = "#!/bin/sh\necho \"hello\" > out.txt\n";

class SpecOnDemandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open();
  }
  JobId SubmitWithEnvironmentAndScript() {
    return h_->Submit("alice", {{"script", kScript},
                                {"tasks", 2},
                                {"name", "with-env"},
                                {"cwd", "/tmp"},
                                {"env", {{"A", "1"}, {"PATH", "/usr/bin:/bin"}}}});
  }
  // The launch its first host is sent, after one cycle.
  json LaunchOf(JobId id) {
    EXPECT_EQ(h_->Register("h1").status, 200);
    EXPECT_EQ(h_->Register("h2").status, 200);
    h_->Cycle();
    json hb = h_->Heartbeat("h1");
    if (LaunchedIds(hb) != std::vector<JobId>{id}) hb = h_->Heartbeat("h2");
    EXPECT_EQ(LaunchedIds(hb), std::vector<JobId>{id}) << hb.dump();
    return hb["launch"].empty() ? json() : hb["launch"][0];
  }
  void ExpectSubmitted(const json& launch) {
    EXPECT_EQ(launch["script"], kScript);
    EXPECT_EQ(launch["env"]["A"], "1");
    EXPECT_EQ(launch["env"]["PATH"], "/usr/bin:/bin");
    EXPECT_EQ(launch["env"]["SLUICE_JOB_NAME"], "with-env");
    EXPECT_EQ(launch["cwd"], "/tmp");
    EXPECT_EQ(launch["user"], "alice");
    EXPECT_EQ(launch["account"], "alice");
  }

  // Sets the stored spec's env.A: what the controller reads from the store from now on.
  void SetStoredVariable(JobId id, const std::string& value) {
    ::sluice::testing::ExecOnStateDatabase(
        dir_.path(), "UPDATE jobs SET spec = json_set(spec, '$.env.A', '" + value +
                         "') WHERE id = " + std::to_string(id));
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
};

TEST_F(SpecOnDemandTest, TheLaunchCarriesTheSubmittedEnvironmentAndScript) {
  const JobId id = SubmitWithEnvironmentAndScript();
  ExpectSubmitted(LaunchOf(id));
}

TEST_F(SpecOnDemandTest, AfterARestartTheLaunchCarriesTheSameEnvironmentAndScript) {
  const JobId id = SubmitWithEnvironmentAndScript();
  const json before = h_->Job(id);
  h_->Close();
  h_->Open();
  EXPECT_EQ(h_->Job(id), before);  // the API shows the same job
  ExpectSubmitted(LaunchOf(id));
}

// Once its submission committed, the record keeps no copy of the spec (a million waiting jobs
// would hold ~300 B each, and real jobs' environments are KBs): the launch reads the store's.
TEST_F(SpecOnDemandTest, OnceStoredTheSpecIsReadFromTheStoreNotKept) {
  const JobId id = SubmitWithEnvironmentAndScript();
  SetStoredVariable(id, "from the store");
  const json launch = LaunchOf(id);
  EXPECT_EQ(launch["env"]["A"], "from the store");
  EXPECT_EQ(launch["script"], kScript);
  EXPECT_EQ(launch["env"]["SLUICE_JOB_NAME"], "with-env");
}

// A modify's spec is kept until its write committed, then read back from the store: the
// launch carries the change, before and after a restart.
TEST_F(SpecOnDemandTest, AModifiedSpecReachesTheLaunch) {
  const JobId id = h_->Submit("alice", {{"command", "true"}, {"name", "first"}, {"hold", true}});
  const Reply modified = Reply(h_->c().Modify(Caller{.user = "alice"}, id, {{"name", "second"}}));
  ASSERT_EQ(modified.status, 200) << modified.body.dump();
  EXPECT_EQ(h_->Job(id)["name"], "second");
  h_->Close();
  h_->Open();
  EXPECT_EQ(h_->Job(id)["name"], "second");
  ASSERT_EQ(Reply(h_->c().Hold(Caller{.user = "alice"}, id, false)).status, 200);
  EXPECT_EQ(LaunchOf(id)["env"]["SLUICE_JOB_NAME"], "second");
}

// Where the store deletes ended jobs' rows (its history retention) before the controller forgets
// the jobs, the records keep their specs: a job whose row went can still be requeued, and is
// stored again whole (it is there after a restart).
TEST_F(SpecOnDemandTest, RecordsThatOutliveTheirRowsKeepTheirSpecs) {
  h_->Close();
  h_->set_keep_seconds(/*ended=*/3600, /*history=*/60);
  h_->Open();
  const JobId id = SubmitWithEnvironmentAndScript();
  ASSERT_FALSE(LaunchOf(id).is_null());
  const std::string host = h_->Job(id)["hosts"][0]["name"].get<std::string>();
  h_->Heartbeat(host, json::array({id}));
  h_->Heartbeat(host, json::array(), Exited(id));
  h_->c().FlushStore();
  ASSERT_EQ(h_->State(id), "DONE");
  // As a purge would.
  ::sluice::testing::ExecOnStateDatabase(dir_.path(),
                                         "DELETE FROM jobs WHERE id = " + std::to_string(id));

  const Reply requeued = Reply(h_->c().Requeue(Caller{.user = "alice"}, id));
  ASSERT_EQ(requeued.status, 200) << requeued.body.dump();
  h_->c().FlushStore();
  h_->Close();
  h_->Open();
  EXPECT_EQ(h_->State(id), "PENDING");
  ExpectSubmitted(LaunchOf(id));
}

TEST_F(SpecOnDemandTest, TheDetailsShowTheScriptSizeAndTheListedFieldsFromTheSpec) {
  const JobId id = SubmitWithEnvironmentAndScript();
  const json job = h_->Job(id);
  EXPECT_EQ(job["script_bytes"], std::string(kScript).size());
  EXPECT_EQ(job["user"], "alice");
  EXPECT_EQ(job["name"], "with-env");
  EXPECT_EQ(job["cwd"], "/tmp");
  EXPECT_EQ(job["tasks"], 2);
}

}  // namespace
}  // namespace sluice::server
