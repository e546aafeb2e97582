// Loopback integration of modify, requeue and history (R-UX-6, R-UX-7) with a real server and
// a real agent: an administrator raising a running job's run limit lets it run past the old
// one (the agent's timer follows); a requeued running job is killed and runs again — its
// output shows two runs, one at a time — ahead of a later submission; `sluice history`
// lists the ended jobs with --csv and --summary.
#include <gtest/gtest.h>

#include <filesystem>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::ReadFile;

constexpr char kOneHost[] = R"(
hosts:
  - name: h1
    slots: 4
queues:
  - name: normal
    policy: fifo
)";

class JobChangesIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<Cluster>(DefaultClusterYaml(kOneHost));
    std::string error;
    ASSERT_TRUE(cluster_->StartServer(&error)) << error;
    cluster_->StartAgent("h1", 4);
    ASSERT_TRUE(Eventually([&] {
      json hosts = cluster_->Get("/v1/hosts");
      return hosts.is_array() && !hosts.empty() && hosts[0].value("state", "") == "ok";
    }));
  }
  int64_t Submit(std::vector<std::string> args) {
    args.insert(args.begin(), {"submit", "--parsable"});
    testing::ProcessResult r = cluster_->Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    try {
      return std::stoll(r.stdout_text);
    } catch (...) {
      return -1;
    }
  }
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(JobChangesIntegrationTest, AnAdminRaisingARunningJobsRunLimitLetsItRunPastTheOldOne) {
  Cluster& c = *cluster_;
  const std::string out = (c.dir() / "limit.out").string();
  const int64_t id = Submit({"-W", "3s", "-o", out, "--", "sleep 5; echo finished"});
  ASSERT_TRUE(Eventually([&] { return c.JobState(id) == "RUNNING"; }, 20s)) << c.Logs();
  // A change no host could ever run is refused (422) with exit 2, as a refused submission.
  const int64_t held = Submit({"-H", "--", "true"});
  testing::ProcessResult impossible = c.Cli({"modify", std::to_string(held), "-n", "100"});
  EXPECT_EQ(impossible.exit_code, 2) << impossible.stderr_text;
  EXPECT_NE(impossible.stderr_text.find("not modified"), std::string::npos)
      << impossible.stderr_text;
  testing::ProcessResult refused = c.Cli({"modify", std::to_string(id), "-W", "60s"});
  EXPECT_EQ(refused.exit_code, 1) << refused.stderr_text;  // 403: not an administrator
  testing::ProcessResult raised = c.Cli({"modify", std::to_string(id), "-W", "60s"}, "admin-token");
  ASSERT_EQ(raised.exit_code, 0) << raised.stderr_text;
  ASSERT_TRUE(c.WaitAllEnded({id}, 30s)) << c.Logs();
  const json job = c.Job(id);
  EXPECT_EQ(job["state"], "DONE") << job.dump() << c.Logs();
  EXPECT_EQ(ReadFile(out).value_or(""), "finished\n");
}

TEST_F(JobChangesIntegrationTest, ARequeuedJobRunsAgainOneRunAtATimeAheadOfLaterJobs) {
  Cluster& c = *cluster_;
  const std::string runs = (c.dir() / "runs").string();
  const std::string pids = (c.dir() / "pids").string();
  // Each run notes whether an earlier run is still alive, then its own start and end.
  const std::string script = "for p in $(cat " + pids +
                             " 2>/dev/null); do kill -0 $p 2>/dev/null"
                             " && echo overlap >> " +
                             runs + "; done; echo $$ >> " + pids + "; echo start >> " + runs +
                             "; sleep 2; echo end >> " + runs;
  const int64_t first = Submit({"-n", "4", "--", script});
  ASSERT_TRUE(Eventually([&] { return ReadFile(runs).value_or("") == "start\n"; }, 20s))
      << c.Logs();
  const int64_t later = Submit({"-n", "4", "--", "true"});
  testing::ProcessResult requeued = c.Cli({"requeue", std::to_string(first)});
  ASSERT_EQ(requeued.exit_code, 0) << requeued.stderr_text;
  ASSERT_TRUE(c.WaitAllEnded({first, later}, 40s)) << c.Logs();
  EXPECT_EQ(ReadFile(runs).value_or(""), "start\nstart\nend\n") << c.Logs();
  const json a = c.Job(first);
  const json b = c.Job(later);
  EXPECT_EQ(a["state"], "DONE");
  EXPECT_LE(a["end_time"].get<int64_t>(), b["start_time"].get<int64_t>());

  // Both are in the history, newest end first, also as CSV and in the summary.
  testing::ProcessResult csv = c.Cli({"history", "--csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.stderr_text;
  EXPECT_EQ(csv.stdout_text.rfind("id,name,user,queue,state", 0), 0u) << csv.stdout_text;
  EXPECT_NE(csv.stdout_text.find("\r\n" + std::to_string(later) + ","), std::string::npos);
  testing::ProcessResult summary = c.Cli({"history", "--summary", "-u", "alice"});
  ASSERT_EQ(summary.exit_code, 0) << summary.stderr_text;
  EXPECT_NE(summary.stdout_text.find("alice"), std::string::npos) << summary.stdout_text;
  EXPECT_EQ(c.Cli({"history", "-s", "RUNNING"}).exit_code, 2);

  // Every run stays (issue 47.6): `history ID` lists the requeued run and the last one;
  // `history -l ID` tells the story in order.
  testing::ProcessResult rows = c.Cli({"history", std::to_string(first)});
  ASSERT_EQ(rows.exit_code, 0) << rows.stderr_text;
  EXPECT_NE(rows.stdout_text.find("REQUEUED"), std::string::npos) << rows.stdout_text;
  EXPECT_NE(rows.stdout_text.find("DONE"), std::string::npos) << rows.stdout_text;
  testing::ProcessResult timeline = c.Cli({"history", "-l", "-j", std::to_string(first)});
  ASSERT_EQ(timeline.exit_code, 0) << timeline.stderr_text;
  const std::string& t = timeline.stdout_text;
  const size_t submitted = t.find("submitted");
  const size_t started = t.find("started on h");
  const size_t requeue = t.find("requeued: by alice");
  const size_t again = t.find("started on h", requeue);
  const size_t ended = t.find("ended DONE (exit 0)");
  ASSERT_NE(ended, std::string::npos) << t;
  EXPECT_TRUE(submitted < started && started < requeue && requeue < again && again < ended)
      << t;
  EXPECT_NE(t.find("2 runs"), std::string::npos) << t;
  EXPECT_EQ(c.Cli({"history", "-l"}).exit_code, 2);  // -l needs a job
  EXPECT_EQ(c.Cli({"history", "1[99999999999]"}).exit_code, 2);  // no such element
  // bhist -l, the drop-in command, prints the same timeline.
  const std::filesystem::path compat =
      std::filesystem::path(testing::SluiceBinary()).parent_path() / "compat";
  testing::ProcessResult bhist = testing::RunProcess(
      {"/usr/bin/env", "PATH=" + compat.string() + ":/usr/bin:/bin", "SLUICE_SERVER=" + c.url(),
       "SLUICE_TOKEN=alice-token", "bhist", "-l", std::to_string(first)},
      c.dir(), 60s);
  EXPECT_EQ(bhist.exit_code, 0) << bhist.stderr_text;
  EXPECT_EQ(bhist.stdout_text, t);
}

}  // namespace
}  // namespace sluice::integration
