// How the drop-in commands find a job (cli/compat/job_lookup.h): ids in both dialects, and an
// ended job the controller no longer keeps found in history, so every status command still
// answers for it (R-COMPAT-1).
#include "cli/compat/job_lookup.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <thread>

#include "base/array_ids.h"
#include "cli/compat/compat_commands.h"
#include "testing/wait.h"

namespace sluice::cli::compat {
namespace {

using nlohmann::json;

TEST(CompatJobIdTest, BothDialectsNameArrayElements) {
  EXPECT_EQ(ParseJobId("12").value(), 12);
  EXPECT_EQ(ParseJobId("12_3").value(), ArrayElementId(12, 3));
  EXPECT_EQ(ParseJobId("12[3]").value(), ArrayElementId(12, 3));
  EXPECT_EQ(ParseJobId("12_0").value(), ArrayElementId(12, 0));
  for (const char* bad : {"", "x", "0", "12_", "12[3", "12_x", "-1", "12[3]x"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseJobId(bad).has_value());
  }
}

TEST(CompatCommandNamesTest, TheDropInsAnswerToTheirNamesOnly) {
  for (const char* name : {"sbatch", "squeue", "sacct", "scontrol", "scancel", "sinfo", "bsub",
                           "bjobs", "bkill", "bhist", "bqueues", "bhosts", "bparams", "lsadmin",
                           "lsid", "srun", "salloc", "blaunch", "bmod", "brequeue", "bpeek"}) {
    EXPECT_TRUE(IsCompatCommand(name)) << name;
  }
  for (const char* name : {"sluice", "submit", "launch", "bsubmit"}) {
    EXPECT_FALSE(IsCompatCommand(name)) << name;
  }
  EXPECT_EQ(ProgramName("/usr/local/bin/sbatch"), "sbatch");
  EXPECT_EQ(ProgramName("bjobs"), "bjobs");
}

TEST(CompatCommandNamesTest, BadOptionsFailWithTheOriginalsExitCodes) {
  const std::vector<std::string> bogus = {"--bogus"};
  EXPECT_EQ(Sbatch(bogus), 1);
  EXPECT_EQ(Squeue(bogus), 1);
  EXPECT_EQ(Sacct(bogus), 1);
  EXPECT_EQ(Scontrol({}), 1);
  const std::vector<std::string> lsf_bogus = {"-bogus"};
  EXPECT_EQ(Bjobs(lsf_bogus), 255);
  EXPECT_EQ(Bsub(lsf_bogus), 255);
  EXPECT_EQ(Bkill(lsf_bogus), 255);
}

TEST(CompatCommandNamesTest, ToilsLsfProbesAnswer) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(Bparams(std::vector<std::string>{"-a"}), 0);
  EXPECT_EQ(Lsadmin(std::vector<std::string>{"showconf", "lim"}), 0);
  EXPECT_EQ(Lsid({}), 0);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("LSF_UNIT_FOR_LIMITS = MB\n"), std::string::npos) << out;
  EXPECT_NE(out.find("RESOURCE_RESERVE_PER_TASK = Y\n"), std::string::npos) << out;
  EXPECT_NE(out.find("IBM Spectrum LSF Standard 10.1.0.13,"), std::string::npos) << out;
}

// A controller that no longer keeps job 7 (404) but has it in history, behind a first page
// of other rows.
class HistoryOnlyController {
 public:
  HistoryOnlyController() {
    server_.Get("/v1/jobs/7", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content(R"({"error": "job 7 is no longer kept"})", "application/json");
    });
    server_.Get("/v1/history", [](const httplib::Request& req, httplib::Response& res) {
      json page;
      if (!req.has_param("cursor")) {
        page = {{"jobs", json::array({Row(9, "DONE", 0)})}, {"next_cursor", "100.9"}};
      } else {
        page = {{"jobs", json::array({Row(7, "EXIT", 3)})}, {"next_cursor", nullptr}};
      }
      res.set_content(page.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(testing::Eventually([&] { return server_.is_running(); }));
  }
  ~HistoryOnlyController() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  static json Row(int64_t id, const char* state, int code) {
    return {{"id", id}, {"name", "j"}, {"user", "alice"}, {"queue", "batch"},
            {"state", state}, {"exit_code", code}, {"cause", code ? "NON_ZERO_EXIT" : ""},
            {"submit_time", 100}, {"start_time", 101}, {"end_time", 110},
            {"wait_seconds", 1}, {"run_seconds", 9}, {"slots", 1},
            {"hosts", json::array({{{"host", "n1"}, {"slots", 1}}})}, {"cpu_seconds", nullptr},
            {"max_rss_mb", nullptr}, {"message", ""}};
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(CompatJobLookupTest, AJobNoLongerKeptIsFoundInHistory) {
  HistoryOnlyController controller;
  client::RestClient rest(client::ClientOptions{.server = controller.url(), .token = "t"});
  Result<client::compat::CompatJob> job = FindJob(rest, 7);
  ASSERT_TRUE(job.has_value()) << job.error().message();
  EXPECT_EQ(job->id, 7);
  EXPECT_EQ(job->state, "EXIT");
  EXPECT_TRUE(job->from_history);
  EXPECT_EQ(client::compat::SlurmExitCode(*job), "3:0");
  Result<client::compat::CompatJob> unknown = FindJob(rest, 8);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sluice::cli::compat
