// A job's record keeps only a compact view of its spec (job_book.h, issue 45); the rest is
// read from the spec's text when needed. What the job was submitted with must reach its agent
// and the API unchanged, before and after a restart.
#include <gtest/gtest.h>

#include "server/controller.h"
#include "server/controller_fixture.h"
#include "server/http_reply.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
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
