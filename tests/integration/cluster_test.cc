// Loopback integration: a real server and real agents, driven through the CLI (R-SRV-3,
// R-SRV-5, R-SRV-5b): jobs of several shapes run with their output files and exit codes;
// cancel of pending and running jobs; pending reasons in `jobs -p`; hold/release; auth
// (403 for another user's job, 401 without a token); a second server on the same state
// directory refuses to start; agent loss (host unavail, job requeued, agent rejoins); the
// admin verbs `sluice queue` and `sluice host`.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <regex>
#include <set>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::ReadFile;

int64_t SubmitId(const testing::ProcessResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.stderr_text;
  try {
    return std::stoll(result.stdout_text);
  } catch (...) {
    ADD_FAILURE() << "not a job id: `" << result.stdout_text << "` " << result.stderr_text;
    return -1;
  }
}

bool AllHostsConnected(Cluster& cluster, size_t count) {
  json hosts = cluster.Get("/v1/hosts");
  if (!hosts.is_array()) return false;
  size_t ok = 0;
  for (const json& host : hosts) {
    if (host.value("state", "") == "ok" && host.contains("agent") &&
        host["agent"].value("connected", false)) {
      ++ok;
    }
  }
  return ok >= count;
}

class ClusterTest : public ::testing::Test {
 protected:
  void Start(const std::string& hosts_and_queues, const std::vector<std::string>& agents, int slots,
             const std::vector<std::string>& server_flags = {}) {
    cluster_ = std::make_unique<Cluster>(DefaultClusterYaml(hosts_and_queues));
    std::string error;
    ASSERT_TRUE(cluster_->StartServer(&error, server_flags)) << error;
    for (const std::string& name : agents) cluster_->StartAgent(name, slots);
    ASSERT_TRUE(Eventually([&] { return AllHostsConnected(*cluster_, agents.size()); }))
        << cluster_->Get("/v1/hosts").dump();
  }
  std::unique_ptr<Cluster> cluster_;
};

constexpr char kThreeHosts[] = R"(
hosts:
  - name: h[1-3]
    slots: 4
queues:
  - name: normal
    policy: fifo
)";

TEST_F(ClusterTest, JobsOfSeveralShapesRunWithOutputAndExitCodes) {
  Start(kThreeHosts, {"h1", "h2", "h3"}, 4);
  Cluster& c = *cluster_;
  const std::string out = (c.dir() / "out.%j").string();
  const int64_t hello = SubmitId(c.Cli(
      {"submit", "--parsable", "-o", out, "--", "echo hello $SLUICE_JOB_ID $SLUICE_NTASKS; pwd"}));
  const int64_t wide =
      SubmitId(c.Cli({"submit", "--parsable", "-n", "6", "-o", out, "--", "echo $SLUICE_HOSTS"}));
  const int64_t fails = SubmitId(c.Cli({"submit", "--parsable", "--", "exit 3"}));
  const int64_t argv = SubmitId(c.Cli({"submit", "--parsable", "-n", "2", "-R", "span[hosts=1]",
                                       "-o", out, "--cwd", c.dir().string(), "--", "echo", "a b"}));
  testing::ProcessResult plain = c.Cli({"submit", "-o", out, "--", "true"});
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_TRUE(plain.stdout_text.starts_with("Job <") &&
              plain.stdout_text.ends_with("> is submitted to queue <normal>.\n"))
      << plain.stdout_text;

  ASSERT_TRUE(c.WaitAllEnded({hello, wide, fails, argv}, 30s)) << c.Get("/v1/jobs").dump();
  json job = c.Job(hello);
  EXPECT_EQ(job["state"], "DONE");
  EXPECT_EQ(job["exit_code"], 0);
  // The job ran in the submitter's working directory (the CLI's, i.e. this test's).
  const std::string cli_dir = std::filesystem::current_path().string();
  EXPECT_EQ(ReadFile(c.dir() / ("out." + std::to_string(hello))),
            "hello " + std::to_string(hello) + " 1\n" + cli_dir + "\n");
  // Six tasks on 4-slot hosts: two hosts, listed as name:slots summing to 6.
  auto hosts_line = ReadFile(c.dir() / ("out." + std::to_string(wide)));
  ASSERT_TRUE(hosts_line.has_value());
  int total = 0;
  std::set<std::string> names;
  std::string text = *hosts_line;
  for (size_t at = 0; at < text.size();) {
    size_t comma = text.find_first_of(",\n", at);
    std::string item = text.substr(at, comma - at);
    names.insert(item.substr(0, item.find(':')));
    total += std::stoi(item.substr(item.find(':') + 1));
    at = comma + 1;
  }
  EXPECT_EQ(total, 6) << text;
  EXPECT_GE(names.size(), 2u) << text;
  EXPECT_EQ(c.JobState(wide), "DONE");
  json failed = c.Job(fails);
  EXPECT_EQ(failed["state"], "EXIT");
  EXPECT_EQ(failed["exit_code"], 3);
  EXPECT_EQ(ReadFile(c.dir() / ("out." + std::to_string(argv))), "a b\n");

  // `jobs --json`: the stable fields of R-SRV-5b.
  testing::ProcessResult listed = c.Cli({"jobs", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.stderr_text;
  json jobs = json::parse(listed.stdout_text);
  ASSERT_TRUE(jobs.is_array());
  ASSERT_EQ(jobs.size(), 5u);
  for (const json& entry : jobs) {
    for (const char* key : {"id", "state", "user", "queue", "submit_time", "start_time", "end_time",
                            "exit_code", "reason"}) {
      EXPECT_TRUE(entry.contains(key)) << key << " missing in " << entry.dump();
    }
    EXPECT_EQ(entry["user"], "alice");
    EXPECT_TRUE(entry["reason"].is_null());
  }
}

TEST_F(ClusterTest, CancelHoldReleaseReasonsAndAuth) {
  Start(kThreeHosts, {"h1", "h2", "h3"}, 4);
  Cluster& c = *cluster_;
  // A job that fills the cluster runs; the next ones wait behind it.
  const int64_t big = SubmitId(c.Cli({"submit", "--parsable", "-n", "12", "--cwd", c.dir().string(),
                                      "--", "echo $$ > big.pid; exec sleep 60"}));
  ASSERT_TRUE(Eventually([&] { return c.JobState(big) == "RUNNING"; })) << c.Job(big).dump();
  const int64_t waiting = SubmitId(c.Cli({"submit", "--parsable", "-n", "4", "--", "true"}));
  const int64_t held = SubmitId(c.Cli({"submit", "--parsable", "-H", "--", "true"}));
  ASSERT_TRUE(Eventually([&] {
    json job = c.Job(waiting);
    return job.is_object() && job["reason"].is_string() && job["reason"] != "NEW_JOB";
  })) << c.Job(waiting).dump();
  EXPECT_EQ(c.JobState(held), "HELD");

  testing::ProcessResult pending = c.Cli({"jobs", "-p"});
  EXPECT_EQ(pending.exit_code, 0) << pending.stderr_text;
  EXPECT_NE(pending.stdout_text.find("PENDING REASONS:"), std::string::npos) << pending.stdout_text;
  EXPECT_NE(pending.stdout_text.find("\n" + std::to_string(waiting) + " "), std::string::npos)
      << pending.stdout_text;
  EXPECT_EQ(pending.stdout_text.find("\n" + std::to_string(big) + " "), std::string::npos)
      << "running job listed as pending:\n"
      << pending.stdout_text;

  // Auth: bob may not cancel alice's job; no token is 401.
  testing::ProcessResult refused = c.Cli({"cancel", std::to_string(waiting)}, "bob-token");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.stderr_text.find("error: "), std::string::npos);
  int status = 0;
  c.Post("/v1/jobs/" + std::to_string(waiting) + "/cancel", json::object(), "bob-token", &status);
  EXPECT_EQ(status, 403);
  c.Get("/v1/jobs", "", &status);
  EXPECT_EQ(status, 401);
  testing::ProcessResult anonymous = c.Cli({"jobs"}, "no-such-token");
  EXPECT_EQ(anonymous.exit_code, 1);
  EXPECT_EQ(c.JobState(waiting), "PENDING");

  // Cancel a pending and a running job.
  EXPECT_EQ(c.Cli({"cancel", std::to_string(waiting)}).exit_code, 0);
  EXPECT_EQ(c.JobState(waiting), "CANCELLED");
  auto pid_text = ReadFile(c.dir() / "big.pid");
  ASSERT_TRUE(pid_text.has_value());
  const std::string proc = "/proc/" + std::to_string(std::stoi(*pid_text));
  ASSERT_TRUE(std::filesystem::exists(proc));
  EXPECT_EQ(c.Cli({"cancel", std::to_string(big)}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return !std::filesystem::exists(proc); }))
      << "the running job's process survived its cancel";
  EXPECT_EQ(c.JobState(big), "CANCELLED");

  // The held job runs once released; cancelling it again is refused (409: exit code 1).
  EXPECT_EQ(c.Cli({"release", std::to_string(held)}).exit_code, 0);
  ASSERT_TRUE(c.WaitAllEnded({held}, 30s)) << c.Job(held).dump();
  EXPECT_EQ(c.JobState(held), "DONE");
  EXPECT_EQ(c.Cli({"cancel", std::to_string(held)}).exit_code, 1);
  EXPECT_EQ(c.Cli({"jobs", "999999"}).exit_code, 2);
}

// `sluice queue` and `sluice host` (badmin habits): admins open, close, activate and
// inactivate queues and open and close hosts; a user is refused (403, exit 1); an unknown
// name is bad input (404, exit 2); every name is tried.
TEST_F(ClusterTest, AdminVerbsOpenCloseActivateAndInactivate) {
  Start(kThreeHosts, {"h1"}, 4);
  Cluster& c = *cluster_;
  const auto queue_field = [&](const char* field) {
    for (const json& q : c.Get("/v1/queues")) {
      if (q["name"] == "normal") return q[field];
    }
    return json();
  };

  testing::ProcessResult closed = c.Cli({"queue", "close", "normal"}, "admin-token");
  EXPECT_EQ(closed.exit_code, 0) << closed.stderr_text;
  EXPECT_EQ(closed.stdout_text, "Queue <normal> is closed\n");
  EXPECT_EQ(queue_field("open"), false);
  testing::ProcessResult refused_submit = c.Cli({"submit", "--", "true"});
  EXPECT_EQ(refused_submit.exit_code, 2);
  EXPECT_NE(refused_submit.stderr_text.find("closed"), std::string::npos)
      << refused_submit.stderr_text;
  EXPECT_EQ(c.Cli({"queue", "open", "normal"}, "admin-token").exit_code, 0);
  EXPECT_EQ(queue_field("open"), true);

  // Inactive: submissions are accepted but nothing dispatches; the job says why.
  testing::ProcessResult inactive = c.Cli({"queue", "inactivate", "normal"}, "admin-token");
  EXPECT_EQ(inactive.stdout_text, "Queue <normal> is inactivated\n") << inactive.stderr_text;
  EXPECT_EQ(queue_field("active"), false);
  const int64_t job = SubmitId(c.Cli({"submit", "--parsable", "--", "true"}));
  ASSERT_TRUE(Eventually([&] { return c.Job(job)["reason"] == "QUEUE_INACTIVE"; })) << c.Job(job);
  EXPECT_EQ(c.Cli({"queue", "activate", "normal"}, "admin-token").stdout_text,
            "Queue <normal> is activated\n");
  ASSERT_TRUE(c.WaitAllEnded({job}, 30s)) << c.Job(job).dump();

  // Hosts.
  testing::ProcessResult host = c.Cli({"host", "close", "h1"}, "admin-token");
  EXPECT_EQ(host.stdout_text, "Host <h1> is closed\n") << host.stderr_text;
  EXPECT_EQ(c.HostState("h1"), "closed");
  EXPECT_EQ(c.Cli({"host", "open", "h1"}, "admin-token").stdout_text, "Host <h1> is opened\n");
  EXPECT_EQ(c.HostState("h1"), "ok");

  // A user is refused with the server's reason; nothing changed.
  testing::ProcessResult user = c.Cli({"queue", "close", "normal"}, "alice-token");
  EXPECT_EQ(user.exit_code, 1);
  EXPECT_NE(user.stderr_text.find("Queue <normal>: error: alice is not an administrator"),
            std::string::npos)
      << user.stderr_text;
  EXPECT_EQ(queue_field("open"), true);
  EXPECT_EQ(c.Cli({"host", "close", "h1"}, "bob-token").exit_code, 1);
  EXPECT_EQ(c.HostState("h1"), "ok");

  // Several names: the unknown one fails (404: exit 2), the others are done.
  testing::ProcessResult several = c.Cli({"host", "close", "h2", "nosuch", "h3"}, "admin-token");
  EXPECT_EQ(several.exit_code, 2);
  EXPECT_EQ(several.stdout_text, "Host <h2> is closed\nHost <h3> is closed\n");
  EXPECT_NE(several.stderr_text.find("Host <nosuch>: error: no host named 'nosuch'"),
            std::string::npos)
      << several.stderr_text;
}

TEST_F(ClusterTest, ASecondServerOnTheSameStateDirectoryRefusesToStart) {
  Start(kThreeHosts, {}, 4);
  Cluster& c = *cluster_;
  std::filesystem::create_directories(c.dir() / "second");
  testing::ProcessResult second = testing::RunProcess(
      {sluice::testing::SluiceBinary(), "server", "--config", (c.dir() / "cluster.yaml").string(),
       "--state", c.state_dir().string(), "--listen", "127.0.0.1:0"},
      c.dir() / "second", 30s);
  EXPECT_EQ(second.exit_code, 1) << second.stdout_text;
  EXPECT_NE(second.stderr_text.find("locked"), std::string::npos) << second.stderr_text;
  EXPECT_EQ(second.stdout_text.find("listening"), std::string::npos);
  EXPECT_TRUE(c.server()->Running());
}

// Issue 47.10: the server and the agent take the same log flags and write one format.
TEST_F(ClusterTest, ServerAndAgentLogToTheirFilesInOneFormat) {
  sluice::testing::TempDir logs;
  const std::string server_log = (logs.path() / "server.log").string();
  const std::string agent_log = (logs.path() / "agent.log").string();
  Start(kThreeHosts, {}, 4, {"--log-file", server_log, "--log-level", "debug"});
  cluster_->StartAgent("h1", 2, "", {"--log-file", agent_log});
  ASSERT_TRUE(Eventually([&] { return cluster_->HostState("h1") == "ok"; })) << cluster_->Logs();
  const std::regex line("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3} (trace|debug|info|warning|error|critical) .+$");
  for (const std::string& path : {server_log, agent_log}) {
    const std::string text = ReadFile(path).value_or("");
    ASSERT_FALSE(text.empty()) << path;
    size_t at = 0;
    for (size_t end = text.find('\n'); end != std::string::npos; at = end + 1, end = text.find('\n', at)) {
      EXPECT_TRUE(std::regex_match(text.substr(at, end - at), line)) << path << ": " << text.substr(at, end - at);
    }
  }
  EXPECT_TRUE(Eventually([&] {
    return ReadFile(server_log).value_or("").find("host h1: agent registered") != std::string::npos &&
           ReadFile(agent_log).value_or("").find("agent h1: registered") != std::string::npos;
  })) << ReadFile(server_log).value_or("") << ReadFile(agent_log).value_or("");
  // An agent that cannot reach its controller says so at once, naming the URL and why; one
  // given a scheme the HTTP library does not speak is refused (it died of it).
  const std::string lost_log = (logs.path() / "lost.log").string();
  cluster_->StartAgent("h2", 2, "http://127.0.0.1:9", {"--log-file", lost_log});
  EXPECT_TRUE(Eventually([&] {
    return ReadFile(lost_log).value_or("").find(
               "agent h2: cannot reach the controller at http://127.0.0.1:9 (connection "
               "failed") != std::string::npos;
  })) << ReadFile(lost_log).value_or("");
  testing::ProcessResult ftp = testing::RunProcess(
      {sluice::testing::SluiceBinary(), "agent", "--name", "h3", "--server", "ftp://127.0.0.1:9",
       "--token", "agent-token", "--cgroup", "none"},
      logs.path(), 30s);
  EXPECT_EQ(ftp.exit_code, 2) << ftp.stderr_text;
  EXPECT_NE(ftp.stderr_text.find("expected http://HOST:PORT or https://HOST:PORT"),
            std::string::npos)
      << ftp.stderr_text;
  // A level that does not exist is refused by name.
  testing::ProcessResult bad = testing::RunProcess(
      {sluice::testing::SluiceBinary(), "server", "--config", (cluster_->dir() / "cluster.yaml").string(),
       "--state", (logs.path() / "state").string(), "--listen", "127.0.0.1:0", "--log-level", "loud"},
      logs.path(), 30s);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.stderr_text.find("--log-level loud"), std::string::npos) << bad.stderr_text;
  // The agent names the controller it reached, and the one it lost (the URL was empty when the
  // failed exchange had already cleared it).
  const std::string url = cluster_->url();
  EXPECT_NE(ReadFile(agent_log).value_or("").find("agent h1: connected to " + url),
            std::string::npos)
      << ReadFile(agent_log).value_or("");
  cluster_->KillServer();
  EXPECT_TRUE(Eventually([&] {
    return ReadFile(agent_log).value_or("").find("agent h1: lost the controller at " + url + ":") !=
           std::string::npos;
  })) << ReadFile(agent_log).value_or("");
}

constexpr char kTwoHostsRequeue[] = R"(
hosts:
  - name: h[1-2]
    slots: 2
queues:
  - name: normal
    policy: fifo
    on_host_loss: requeue
)";

TEST_F(ClusterTest, ALostAgentMakesItsHostUnavailAndItsJobIsRequeued) {
  Start(kTwoHostsRequeue, {"h1", "h2"}, 2,
        {"--lease-seconds", "2", "--host-loss-grace-seconds", "1"});
  Cluster& c = *cluster_;
  const int64_t job = SubmitId(c.Cli({"submit", "--parsable", "-n", "2", "--", "exec sleep 60"}));
  std::string first_host;
  ASSERT_TRUE(Eventually([&] {
    json info = c.Job(job);
    if (info["state"] != "RUNNING" || info["hosts"].empty()) return false;
    first_host = info["hosts"][0]["name"];
    return true;
  })) << c.Job(job).dump();
  const std::string other = first_host == "h1" ? "h2" : "h1";

  c.StopAgent(first_host, SIGKILL);
  ASSERT_TRUE(Eventually([&] { return c.HostState(first_host) == "unavail"; }, 20s))
      << c.Get("/v1/hosts").dump();
  // on_host_loss: requeue — the job runs again, on the surviving host.
  ASSERT_TRUE(Eventually(
      [&] {
        json info = c.Job(job);
        return info["state"] == "RUNNING" && !info["hosts"].empty() &&
               info["hosts"][0]["name"] == other;
      },
      20s))
      << c.Job(job).dump();

  c.StartAgent(first_host, 2);
  ASSERT_TRUE(Eventually([&] { return c.HostState(first_host) == "ok"; }, 20s))
      << c.Get("/v1/hosts").dump();
  EXPECT_EQ(c.Cli({"cancel", std::to_string(job)}).exit_code, 0);
}

}  // namespace
}  // namespace sluice::integration
