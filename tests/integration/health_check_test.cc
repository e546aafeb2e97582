// Health checks on a real server and agent (R-OPS-4, issue 43): the host's health program is a
// script that reads a file the test writes. "fail" closes the host with the script's ERROR
// line, shown in `sluice hosts` and beside the host in a pending job's reasons; "ok" reopens
// it and the job runs. `sluice admin reconfig` changing the check reaches the live agent
// without a restart, and `health_check: none` for the host reopens it. `sluice config check`
// names the line of a bad health check.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::WriteFile;

constexpr char kNhcLine[] = "ERROR: nhc: Health check failed: test says fail";

// A health program reading `state`: "ok" passes, anything else fails as NHC does.
std::string WriteCheck(const std::filesystem::path& dir, const std::string& name,
                       const std::filesystem::path& state) {
  const std::filesystem::path path = dir / name;
  WriteFile(path, "#!/bin/sh\nstate=$(cat " + state.string() +
                      ")\n[ \"$state\" = ok ] && exit 0\n"
                      "echo \"ERROR: nhc: Health check failed: test says $state\"\nexit 1\n");
  chmod(path.c_str(), 0755);
  return path.string();
}

std::string Yaml(const std::string& program, const std::string& host_check = "") {
  return DefaultClusterYaml("hosts:\n  - name: h1\n    slots: 1\n" + host_check +
                            "queues:\n  - name: normal\n"
                            "health_check: {program: " +
                            program + ", interval: 3, timeout: 3}\n");
}

json HostEntry(Cluster& c, const std::string& name) {
  json hosts = c.Get("/v1/hosts");
  if (hosts.is_array()) {
    for (const json& host : hosts) {
      if (host.value("name", "") == name) return host;
    }
  }
  return json::object();
}

// The reason beside `host` in the job's per-host pending reasons ("" when none).
std::string VerdictReason(Cluster& c, int64_t id, const std::string& host) {
  const json job = c.Job(id);
  if (!job.is_object() || !job.contains("reasons") || !job["reasons"].is_object()) return "";
  for (const json& v : job["reasons"].value("hosts", json::array())) {
    if (v.value("host", "") == host) return v.value("reason", "");
  }
  return "";
}

TEST(HealthCheckTest, AFailingCheckClosesTheHostAndAPassingOneReopensIt) {
  Cluster c("");
  const std::filesystem::path state = c.dir() / "health.state";
  ASSERT_TRUE(WriteFile(state, "ok\n"));
  const std::string program = WriteCheck(c.dir(), "health.sh", state);
  ASSERT_TRUE(WriteFile(c.dir() / "cluster.yaml", Yaml(program)));
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  c.StartAgent("h1", 1);
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; })) << c.Logs();

  ASSERT_TRUE(WriteFile(state, "fail\n"));
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "closed"; }, 60s)) << c.Logs();
  EXPECT_EQ(HostEntry(c, "h1").value("reason", ""), std::string("health check: ") + kNhcLine);
  testing::ProcessResult hosts = c.Cli({"hosts"}, "admin-token");
  EXPECT_NE(hosts.stdout_text.find(kNhcLine), std::string::npos) << hosts.stdout_text;

  testing::ProcessResult submit = c.Cli({"submit", "--parsable", "--", "true"});
  ASSERT_EQ(submit.exit_code, 0) << submit.stderr_text;
  const int64_t id = std::stoll(submit.stdout_text);
  ASSERT_TRUE(Eventually(
      [&] { return VerdictReason(c, id, "h1").find(kNhcLine) != std::string::npos; }, 60s))
      << c.Job(id).dump() << c.Logs();
  EXPECT_EQ(c.JobState(id), "PENDING");

  ASSERT_TRUE(WriteFile(state, "ok\n"));
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; }, 60s)) << c.Logs();
  EXPECT_FALSE(HostEntry(c, "h1").contains("reason"));
  ASSERT_TRUE(c.WaitAllEnded({id}, 60s)) << c.Logs();
  EXPECT_EQ(c.JobState(id), "DONE");
}

TEST(HealthCheckTest, AReconfigurationReachesTheLiveAgent) {
  Cluster c("");
  const std::filesystem::path ok = c.dir() / "ok.state";
  const std::filesystem::path bad = c.dir() / "bad.state";
  ASSERT_TRUE(WriteFile(ok, "ok\n"));
  ASSERT_TRUE(WriteFile(bad, "broken\n"));
  const std::string passing = WriteCheck(c.dir(), "passing.sh", ok);
  const std::string failing = WriteCheck(c.dir(), "failing.sh", bad);
  ASSERT_TRUE(WriteFile(c.dir() / "cluster.yaml", Yaml(passing)));
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  c.StartAgent("h1", 1);
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; })) << c.Logs();

  // Another program: the agent is told in a heartbeat reply and runs it at once.
  ASSERT_TRUE(WriteFile(c.dir() / "cluster.yaml", Yaml(failing)));
  testing::ProcessResult reload = c.Cli({"admin", "reconfig"}, "admin-token");
  ASSERT_EQ(reload.exit_code, 0) << reload.stderr_text << c.Logs();
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "closed"; }, 60s)) << c.Logs();
  EXPECT_NE(HostEntry(c, "h1").value("reason", "").find("test says broken"), std::string::npos);

  // None for this host: its check's close is lifted.
  ASSERT_TRUE(WriteFile(c.dir() / "cluster.yaml", Yaml(failing, "    health_check: none\n")));
  reload = c.Cli({"admin", "reconfig"}, "admin-token");
  ASSERT_EQ(reload.exit_code, 0) << reload.stderr_text << c.Logs();
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; }, 60s)) << c.Logs();
}

TEST(HealthCheckTest, ConfigCheckNamesTheLineOfABadHealthCheck) {
  Cluster c("");
  const std::string file = (c.dir() / "bad.yaml").string();
  ASSERT_TRUE(WriteFile(file, DefaultClusterYaml("hosts:\n  - name: h1\n"
                                                 "    health_check: {program: nhc}\n"
                                                 "queues:\n  - name: normal\n")));
  std::filesystem::create_directories(c.dir() / "check");
  testing::ProcessResult refused = testing::RunProcess(
      {sluice::testing::SluiceBinary(), "config", "check", file}, c.dir() / "check", 60s);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.stderr_text.find("bad.yaml:3: hosts[0].health_check.program"),
            std::string::npos)
      << refused.stderr_text;
}

}  // namespace
}  // namespace sluice::integration
