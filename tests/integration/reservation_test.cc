// Advance reservations on loopback (issue 42, R-RSV-1, R-RSV-2): a real server and two real
// agents. A reservation made through REST on one of two hosts 30 s ahead for alice keeps bob's
// two-minute job (run limit 2 min) off that host; alice's job in it waits, naming it in
// `jobs -p`, then runs inside the window on the reserved host; a restart keeps the
// reservation, and so does an HA failover (etcd; skipped without it). `sluice rsv` previews,
// makes, lists, shows on `hosts` and deletes one against the same real server.
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include "client/rest_client.h"
#include "integration/cluster_harness.h"
#include "integration/ha_harness.h"
#include "testing/build_paths.h"
#include "testing/subprocess.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr char kTwoHosts[] = R"(
hosts:
  - name: h[1-2]
    slots: 2
queues:
  - name: normal
    policy: easy_backfill
)";

int64_t WallNow() { return static_cast<int64_t>(::time(nullptr)); }

bool HostsConnected(Cluster& c) {
  json hosts = c.Get("/v1/hosts");
  if (!hosts.is_array()) return false;
  int ok = 0;
  for (const json& host : hosts) ok += host.value("state", "") == "ok" ? 1 : 0;
  return ok == 2;
}

// The server and the agents of h1 and h2, both hosts ok.
void StartServerAndBothAgents(Cluster& c) {
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  c.StartAgent("h1", 2);
  c.StartAgent("h2", 2);
  ASSERT_TRUE(Eventually([&] { return HostsConnected(c); }, 30s)) << c.Logs();
}

std::string FirstHost(const json& job) {
  return job.is_object() && job.contains("hosts") && job["hosts"].is_array() &&
                 !job["hosts"].empty()
             ? job["hosts"][0].value("name", "")
             : "";
}

TEST(ReservationTest, KeepsTheHostForItsUsersAndSurvivesARestart) {
  Cluster c(DefaultClusterYaml(kTwoHosts));
  ASSERT_NO_FATAL_FAILURE(StartServerAndBothAgents(c));
  const int64_t begin = WallNow() + 30;
  int status = 0;
  json made = c.Post("/v1/reservations",
                     {{"name", "course"},
                      {"hosts", {"h1"}},
                      {"begin", begin},
                      {"duration", 600},
                      {"users", {"alice"}}},
                     "admin-token", &status);
  ASSERT_EQ(status, 201) << made.dump() << c.Logs();
  // bob's job would run into the window on h1 by its run limit: it starts on h2.
  json bob = c.Post("/v1/jobs", {{"command", "sleep 120"}, {"run_limit", 120}}, "bob-token");
  ASSERT_TRUE(bob.contains("id")) << bob.dump();
  const int64_t bob_id = bob["id"];
  ASSERT_TRUE(Eventually([&] { return c.JobState(bob_id) == "RUNNING"; }, 30s)) << c.Logs();
  EXPECT_EQ(FirstHost(c.Job(bob_id)), "h2");
  // alice's job in the reservation waits for its window, and says so.
  json alice =
      c.Post("/v1/jobs", {{"command", "true"}, {"run_limit", 60}, {"reservation", "course"}},
             "alice-token");
  ASSERT_TRUE(alice.contains("id")) << alice.dump();
  const int64_t alice_id = alice["id"];
  const json waiting = c.Job(alice_id);
  EXPECT_EQ(waiting.value("reservation", ""), "course");
  ASSERT_TRUE(Eventually(
      [&] {
        const testing::ProcessResult p = c.Cli({"jobs", "-p", std::to_string(alice_id)});
        return p.stdout_text.find("reservation course") != std::string::npos;
      },
      20s))
      << c.Cli({"jobs", "-p", std::to_string(alice_id)}).stdout_text << c.Logs();
  // Another user may not submit into it.
  c.Post("/v1/jobs", {{"command", "true"}, {"reservation", "course"}}, "bob-token", &status);
  EXPECT_EQ(status, 403);
  ASSERT_TRUE(c.WaitAllEnded({alice_id}, 90s)) << c.Logs();
  const json ran = c.Job(alice_id);
  EXPECT_EQ(ran.value("state", ""), "DONE") << ran.dump();
  EXPECT_EQ(FirstHost(ran), "h1");
  EXPECT_GE(ran.value("start_time", int64_t{0}), begin) << "inside the window";
  // A restart keeps it.
  c.KillServer(SIGTERM);
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  json kept = c.Get("/v1/reservations/course", "admin-token", &status);
  EXPECT_EQ(status, 200) << kept.dump();
  EXPECT_EQ(kept.value("hosts", json()), json({"h1"}));
  const json hosts = c.Get("/v1/hosts");
  ASSERT_TRUE(hosts.is_array());
  for (const json& host : hosts) {
    if (host.value("name", "") == "h1") {
      EXPECT_EQ(host["reservations"].size(), 1u) << host.dump();
    }
  }
}

// `sluice rsv VERB ARGS --server URL --token TOKEN` (the connection flags are the verbs').
testing::ProcessResult Rsv(Cluster& c, std::vector<std::string> args, const std::string& token) {
  std::vector<std::string> argv = {sluice::testing::SluiceBinary(), "rsv"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--server", c.url(), "--token", token});
  return testing::RunProcess(argv, c.dir() / "cli", 60s);
}

TEST(ReservationTest, TheCliPreviewsMakesListsAndDeletesAgainstTheServer) {
  Cluster c(DefaultClusterYaml(kTwoHosts));
  ASSERT_NO_FATAL_FAILURE(StartServerAndBothAgents(c));
  json bob = c.Post("/v1/jobs", {{"command", "sleep 600"}, {"run_limit", 900}}, "bob-token");
  ASSERT_TRUE(bob.contains("id")) << bob.dump();
  const int64_t bob_id = bob["id"];
  ASSERT_TRUE(Eventually([&] { return c.JobState(bob_id) == "RUNNING"; }, 30s)) << c.Logs();
  const std::string host = FirstHost(c.Job(bob_id));
  const std::vector<std::string> window = {"-m", host, "-b", "now+5m", "-d", "30m", "--maint"};
  // The preview names bob's job, which would still run when the window begins.
  std::vector<std::string> preview = {"preview"};
  preview.insert(preview.end(), window.begin(), window.end());
  testing::ProcessResult p = Rsv(c, preview, "admin-token");
  EXPECT_EQ(p.exit_code, 0) << p.stdout_text << p.stderr_text;
  EXPECT_NE(p.stdout_text.find("Running jobs that would run into the reservation (1)"),
            std::string::npos)
      << p.stdout_text;
  EXPECT_NE(p.stdout_text.find(std::to_string(bob_id)), std::string::npos) << p.stdout_text;
  // Without --ignore-jobs it is refused over that job; with it, made.
  std::vector<std::string> add = {"add", "fix"};
  add.insert(add.end(), window.begin(), window.end());
  p = Rsv(c, add, "admin-token");
  EXPECT_NE(p.exit_code, 0) << p.stdout_text;
  EXPECT_NE(p.stderr_text.find(std::to_string(bob_id)), std::string::npos) << p.stderr_text;
  add.push_back("--ignore-jobs");
  EXPECT_NE(Rsv(c, add, "bob-token").exit_code, 0) << "users may not make reservations here";
  p = Rsv(c, add, "admin-token");
  ASSERT_EQ(p.exit_code, 0) << p.stdout_text << p.stderr_text << c.Logs();
  p = Rsv(c, {"list"}, "admin-token");
  EXPECT_NE(p.stdout_text.find("fix"), std::string::npos) << p.stdout_text;
  const testing::ProcessResult hosts = c.Cli({"hosts"});
  EXPECT_NE(hosts.stdout_text.find("fix"), std::string::npos) << hosts.stdout_text;
  p = Rsv(c, {"delete", "fix"}, "admin-token");
  EXPECT_EQ(p.exit_code, 0) << p.stdout_text << p.stderr_text;
  int status = 0;
  c.Get("/v1/reservations/fix", "admin-token", &status);
  EXPECT_EQ(status, 404);
}

TEST(ReservationTest, AFailoverKeepsTheReservation) {
  const HaOptions options{.controllers = 2, .agents = 2, .slots = 2, .leader_lease_seconds = 1};
  START_OR_SKIP(c, options);
  ASSERT_GE(c->WaitLeader(30s), 0) << c->Logs();
  client::RestClient admin({.server = c->urls(), .token = "admin-token", .timeout = 10s});
  Result<json> made = admin.Post("/v1/reservations", {{"name", "fix"},
                                                      {"hosts", {"h1"}},
                                                      {"begin", WallNow() + 3600},
                                                      {"duration", 600},
                                                      {"maint", true}});
  ASSERT_TRUE(made) << made.error().ToString() << c->Logs();
  const int leader = c->WaitLeader(20s);
  ASSERT_GE(leader, 0);
  c->KillController(leader, SIGKILL);
  ASSERT_TRUE(Eventually(
      [&] {
        const int now = c->Leader();
        return now >= 0 && now != leader;
      },
      60s))
      << c->Logs();
  ASSERT_TRUE(Eventually(
      [&] {
        const json got = c->Get("/v1/reservations/fix");
        return got.is_object() && got.value("maint", false);
      },
      30s))
      << c->Logs();
}

}  // namespace
}  // namespace sluice::integration
