// MUNGE authentication with real processes (R-SEC-2): a private munged, a `sluice server`
// accepting MUNGE, and the one `sluice` CLI binary run as two UNIX accounts (`nobody` and
// `daemon`, through setpriv) acting as two users; replayed and expired credentials are
// refused with 401; an agent running as root (uid 0) registers with MUNGE instead of a token.
// Needs root (munged --force, setpriv); skipped with a printed reason otherwise. Every
// process is stopped by PID; every wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "auth/munge.h"
#include "integration/cluster_harness.h"
#include "integration/munge_daemon.h"
#include "testing/build_paths.h"
#include "testing/subprocess.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Tokens stay for inspection (admin-token); the CLI under test has none.
const std::string kYaml =
    DefaultClusterYaml("hosts:\n  - {name: h1, slots: 2}\nqueues:\n  - {name: normal}\n");

class MungeAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (munged --force, setpriv to other accounts)";
    munge_ = std::make_unique<MungeDaemon>();
    ASSERT_TRUE(munge_->ok()) << munge_->error();
    std::string error;
    ASSERT_TRUE(cluster_.StartServer(&error, {"--munge-socket", munge_->socket()})) << error;
  }

  // `sluice ARGS --server URL` as `account`, with no token: the CLI sends MUNGE credentials.
  testing::ProcessResult CliAs(const std::string& account, const std::string& group,
                               std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "-u",
                                     "SLUICE_TOKEN",
                                     "SLUICE_MUNGE_SOCKET=" + munge_->socket(),
                                     "/usr/bin/setpriv",
                                     "--reuid=" + account,
                                     "--regid=" + group,
                                     "--clear-groups",
                                     sluice::testing::SluiceBinary(),
                                     args[0],
                                     "--server",
                                     cluster_.url()};
    argv.insert(argv.end(), args.begin() + 1, args.end());
    return testing::RunProcess(argv, cluster_.dir(), 30s);
  }

  // A credential of `account` from munge(1), with `ttl` seconds to live.
  std::string CredentialOf(const std::string& account, int ttl) {
    testing::ProcessResult r =
        testing::RunProcess({"/usr/bin/setpriv", "--reuid=" + account, "--regid=nogroup",
                             "--clear-groups", "/usr/bin/munge", "--no-input", "--socket",
                             munge_->socket(), "--ttl", std::to_string(ttl)},
                            cluster_.dir(), 10s);
    EXPECT_EQ(r.exit_code, 0) << r.error << r.stderr_text;
    std::string cred = r.stdout_text;
    while (!cred.empty() && (cred.back() == '\n' || cred.back() == '\r')) cred.pop_back();
    return cred;
  }

  // GET /v1/jobs with `Authorization: Munge <cred>`; returns the HTTP status.
  int GetJobsWith(const std::string& cred, std::string* body = nullptr) {
    httplib::Client client(cluster_.url());
    client.set_read_timeout(10s);
    httplib::Result r = client.Get("/v1/jobs", {{"Authorization", "Munge " + cred}});
    if (!r) return 0;
    if (body != nullptr) *body = r->body;
    return r->status;
  }

  Cluster cluster_{kYaml};
  std::unique_ptr<MungeDaemon> munge_;
};

TEST_F(MungeAuthTest, OneCliBinaryRunAsTwoAccountsActsAsTwoUsers) {
  testing::ProcessResult submitted =
      CliAs("nobody", "nogroup", {"submit", "--parsable", "-H", "--", "sleep", "60"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.stderr_text << cluster_.Logs();
  const std::string id = submitted.stdout_text.substr(0, submitted.stdout_text.find('\n'));
  EXPECT_EQ(cluster_.Job(std::stoll(id)).value("user", ""), "nobody");
  testing::ProcessResult other = CliAs("daemon", "daemon", {"cancel", id});
  EXPECT_EQ(other.exit_code, 1) << other.stderr_text;  // 403: not daemon's job
  EXPECT_NE(cluster_.JobState(std::stoll(id)), "CANCELLED");
  testing::ProcessResult owner = CliAs("nobody", "nogroup", {"cancel", id});
  EXPECT_EQ(owner.exit_code, 0) << owner.stderr_text;
  EXPECT_TRUE(Eventually([&] { return cluster_.JobState(std::stoll(id)) == "CANCELLED"; }, 10s));
}

TEST_F(MungeAuthTest, ReplayedCredentialIsRefusedEvenAfterMungedForgetsIt) {
  const std::string cred = CredentialOf("nobody", 60);
  EXPECT_EQ(GetJobsWith(cred), 200);
  EXPECT_EQ(GetJobsWith(cred), 401);
  // munged remembers decoded credentials only while it runs: after a restart only the
  // controller's own replay cache still refuses the credential.
  ASSERT_TRUE(munge_->Restart()) << munge_->error();
  EXPECT_EQ(GetJobsWith(CredentialOf("nobody", 60)), 200);  // munged serves again
  std::string body;
  EXPECT_EQ(GetJobsWith(cred, &body), 401);
  EXPECT_NE(body.find("already used"), std::string::npos) << body;  // the controller refused
}

TEST_F(MungeAuthTest, ExpiredCredentialIsRefused) {
  const int ttl = 1;
  const std::string cred = CredentialOf("nobody", ttl);
  // Time passing is the scenario: munged counts a credential expired once its clock (whole
  // seconds) is past the encode time + ttl, and the encode time is at most the second it was
  // returned in. No probe can ask earlier: a decode would use the credential up (replay).
  const time_t issued_by = std::time(nullptr);
  while (std::time(nullptr) <= issued_by + ttl) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(GetJobsWith(cred), 401);
}

TEST_F(MungeAuthTest, AgentAsUidZeroRegistersWithoutToken) {
  const auto log = cluster_.dir() / "logs" / "agent.h1.log";
  ChildProcess agent(
      {"/usr/bin/env", "-u", "SLUICE_TOKEN", sluice::testing::SluiceBinary(), "agent", "--name",
       "h1", "--cgroup-path", "sluice-test-" + std::to_string(getpid()) + "/h1", "--server",
       cluster_.url(), "--munge-socket", munge_->socket(), "--work-dir", cluster_.dir().string()},
      log, log);
  EXPECT_TRUE(Eventually([&] { return cluster_.HostState("h1") == "ok"; }, 15s))
      << testing::ReadFile(log).value_or("");
  // An agent whose credential is not uid 0 is a user, and users may not call agent routes.
  const auto log2 = cluster_.dir() / "logs" / "agent.h2.log";
  ChildProcess user_agent(
      {"/usr/bin/env", "-u", "SLUICE_TOKEN", "/usr/bin/setpriv", "--reuid=nobody",
       "--regid=nogroup", "--clear-groups", sluice::testing::SluiceBinary(), "agent", "--name",
       "h2", "--cgroup-path", "sluice-test-" + std::to_string(getpid()) + "/h2", "--server",
       cluster_.url(), "--munge-socket", munge_->socket(), "--work-dir", "/tmp"},
      log2, log2);
  const int status = user_agent.Wait(15s);
  ASSERT_GE(status, 0) << "the agent of nobody still runs";
  // Exit status 2: restarting it would be refused again (the unit does not restart it).
  EXPECT_EQ(WEXITSTATUS(status), 2) << testing::ReadFile(log2).value_or("");
  agent.Stop();
}

// Issue 47.8: root over MUNGE is the agent on the agent routes and, on the others, the user
// root — an administrator here (the YAML's root has admin: true) — so root's CLI works.
TEST_F(MungeAuthTest, RootUsesTheCliOverMungeAsAnAdministrator) {
  testing::ProcessResult held =
      CliAs("nobody", "nogroup", {"submit", "--parsable", "-H", "--", "sleep", "60"});
  ASSERT_EQ(held.exit_code, 0) << held.stderr_text;
  const std::string id = held.stdout_text.substr(0, held.stdout_text.find('\n'));
  testing::ProcessResult listed = CliAs("root", "root", {"jobs", "-u", "all"});
  ASSERT_EQ(listed.exit_code, 0) << listed.stderr_text;
  EXPECT_NE(listed.stdout_text.find(id), std::string::npos) << listed.stdout_text;
  testing::ProcessResult cancelled = CliAs("root", "root", {"cancel", id});  // not root's job
  EXPECT_EQ(cancelled.exit_code, 0) << cancelled.stderr_text;
  EXPECT_EQ(cluster_.Job(std::stoll(id)).value("state", ""), "CANCELLED");
}

// Issue 47.8: a user known by MUNGE only opens a dashboard session with `sluice ui-login`;
// its token then names that user (as the dashboard's #token= address uses it), and cannot
// open another session.
TEST_F(MungeAuthTest, UiLoginGivesAMungeUserADashboardToken) {
  testing::ProcessResult login = CliAs("nobody", "nogroup", {"ui-login", "--ttl", "1h"});
  ASSERT_EQ(login.exit_code, 0) << login.stderr_text;
  const std::string marker = "/ui/#token=";
  const size_t at = login.stdout_text.find(cluster_.url() + marker);
  ASSERT_NE(at, std::string::npos) << login.stdout_text;
  std::string token = login.stdout_text.substr(at + cluster_.url().size() + marker.size());
  token = token.substr(0, token.find('\n'));
  httplib::Client client(cluster_.url());
  httplib::Result who = client.Get("/v1/whoami", {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(who);
  EXPECT_EQ(who->status, 200) << who->body;
  EXPECT_EQ(json::parse(who->body).value("user", ""), "nobody") << who->body;
  httplib::Result again = client.Post("/v1/ui/sessions", {{"Authorization", "Bearer " + token}},
                                      "{}", "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 403) << again->body;
  EXPECT_EQ(CliAs("nobody", "nogroup", {"ui-login", "--ttl", "soon"}).exit_code, 2);
}

// Issue 47.8: a CLI with neither a token nor munged's socket says so when it is refused.
TEST_F(MungeAuthTest, ACliWithoutCredentialsIsToldWhy) {
  testing::ProcessResult r = testing::RunProcess(
      {"/usr/bin/env", "-u", "SLUICE_TOKEN", "SLUICE_MUNGE_SOCKET=/nonexistent/munge.socket",
       sluice::testing::SluiceBinary(), "jobs", "--server", cluster_.url()},
      cluster_.dir(), 30s);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("no MUNGE socket at /nonexistent/munge.socket"), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("no token"), std::string::npos) << r.stderr_text;
}

// Without a token and without munged's socket an agent has no credentials: it says so and
// exits 2 at once instead of retrying unauthenticated requests for ever.
TEST(MungeAgentTest, AnAgentWithoutTokenOrMungeSocketRefusesToStart) {
  testing::TempDir dir;
  testing::ProcessResult r = testing::RunProcess(
      {"/usr/bin/env", "-u", "SLUICE_TOKEN", sluice::testing::SluiceBinary(), "agent", "--name",
       "h1", "--cgroup-path", "sluice-test-" + std::to_string(getpid()) + "/h1", "--server",
       "http://127.0.0.1:9", "--munge-socket", (dir.path() / "no.socket").string()},
      dir.path(), 10s);
  EXPECT_EQ(r.exit_code, 2) << r.error << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("no.socket"), std::string::npos) << r.stderr_text;
}

}  // namespace
}  // namespace sluice::integration
