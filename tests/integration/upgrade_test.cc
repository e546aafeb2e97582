// Upgrades (R-OPS-5) with the real `sluice server` on loopback: the previous release's state
// directory (tests/fixtures/state-v1, copied) is upgraded in place at start, said in the log,
// and every job is served as it was; a state of a newer schema stops the server at once with
// a message naming both versions and the directory, and a non-zero exit; requests of the
// previous protocol (no `Sluice-Protocol` header: today's agents and CLIs) are served, a newer
// major is refused with a message naming both versions.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration/cluster_harness.h"
#include "store/schema_version.h"
#include "store/state_v1_fixture.h"
#include "testing/subprocess.h"
#include "wire/agent_protocol.h"
#include "wire/protocol_version.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// The fixture's cluster: what its README says the server that wrote it ran with.
const std::string kFixtureCluster = DefaultClusterYaml(R"(
hosts:
  - name: h1
    slots: 2
    gpus: 2
queues:
  - {name: normal, policy: fifo, priority: 10}
  - {name: short, policy: fifo, priority: 20}
default_queue: normal
)");

void CopyFixtureInto(const Cluster& c) {
  fs::create_directories(c.state_dir());
  fs::copy_file(store::testing::StateV1Dir() / "sluice.db", c.state_dir() / "sluice.db");
}

TEST(UpgradeTest, TheServerUpgradesThePreviousReleasesStateAndServesEveryJob) {
  Cluster c(kFixtureCluster);
  CopyFixtureInto(c);
  std::string error;
  // Its ended jobs ended before the test began: listed all the same.
  const std::vector<std::string> keep = {"--keep-ended-seconds", "-1"};
  ASSERT_TRUE(c.StartServer(&error, keep)) << error;
  // The first server's log, whole (Logs() keeps only each file's end).
  const std::string log = sluice::testing::ReadFile(c.dir() / "logs" / "server.1.err").value_or("");
  EXPECT_NE(log.find("upgraded state " + c.state_dir().string() + " from schema 1 to " +
                     std::to_string(store::kSchemaVersion)),
            std::string::npos)
      << log;
  for (const store::testing::FixtureJob& want : store::testing::StateV1Jobs()) {
    // The array and its elements are checked in the stores' tests (the API lists them apart).
    if (want.id > 0xffffffff || want.array_states[0] != '\0') continue;
    SCOPED_TRACE("job " + std::to_string(want.id));
    const json job = c.Job(want.id);
    EXPECT_EQ(job.value("state", ""), want.state) << job.dump();
    EXPECT_EQ(job.value("name", ""), want.name);
    EXPECT_EQ(job.value("user", ""), want.user);
  }
  EXPECT_EQ(c.Job(2).value("exit_code", -1), 3);
  // Restarted on the upgraded state: nothing more to upgrade.
  c.KillServer(SIGTERM);
  ASSERT_TRUE(c.StartServer(&error, keep)) << error;
  EXPECT_EQ(c.JobState(6), "PENDING");
}

TEST(UpgradeTest, TheServerRefusesAStateOfANewerSchemaAndExitsNonZero) {
  Cluster c(kFixtureCluster);
  CopyFixtureInto(c);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((c.state_dir() / "sluice.db").c_str(), &db), SQLITE_OK);
  const std::string mark = "INSERT INTO meta (key, value) VALUES ('schema_version', " +
                           std::to_string(store::kSchemaVersion + 1) + ")";
  ASSERT_EQ(sqlite3_exec(db, mark.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  std::string error;
  ASSERT_FALSE(c.StartServer(&error));
  EXPECT_NE(error.find("state directory " + c.state_dir().string() + " has schema version " +
                       std::to_string(store::kSchemaVersion + 1)),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("this sluice's " + std::to_string(store::kSchemaVersion)), std::string::npos)
      << error;
  const int status = c.server()->Wait(20s);
  ASSERT_GE(status, 0) << "still running";
  ASSERT_TRUE(WIFEXITED(status)) << "killed by a signal (a crash), not exited";
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

// A request with `protocol` in its `Sluice-Protocol` header ("": none).
httplib::Result Request(const Cluster& c, const std::string& protocol, const std::string& path,
                        const json* body = nullptr, const std::string& token = "admin-token") {
  httplib::Client client(c.url());
  client.set_read_timeout(10s);
  httplib::Headers headers = {{"Authorization", "Bearer " + token}};
  if (!protocol.empty()) headers.emplace(wire::kProtocolHeader, protocol);
  if (body != nullptr) return client.Post(path.c_str(), headers, body->dump(), "application/json");
  return client.Get(path.c_str(), headers);
}

TEST(UpgradeTest, ThePreviousMinorsClientsAndAgentsAreServedANewerMajorIsRefused) {
  Cluster c(kFixtureCluster);
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  const std::string ours = wire::ToString(wire::kProtocolVersion);
  // Today's CLI: no header. Every reply states the controller's version.
  httplib::Result listed = Request(c, "", "/v1/jobs");
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 200) << listed->body;
  EXPECT_EQ(listed->get_header_value(wire::kProtocolHeader), ours);
  EXPECT_EQ(Request(c, "1.0", "/v1/jobs")->status, 200);
  EXPECT_EQ(Request(c, ours, "/v1/jobs")->status, 200);
  EXPECT_EQ(Request(c, "1.9", "/v1/jobs")->status, 200);  // a newer minor of the same major
  // Today's agent: its registration body, no header.
  const json registration = wire::EncodeRegister({.host = {.name = "h1", .slots = 2}});
  httplib::Result registered = Request(c, "", "/v1/agents/register", &registration, "agent-token");
  ASSERT_TRUE(registered);
  EXPECT_EQ(registered->status, 200) << registered->body;
  const json reply = json::parse(registered->body, nullptr, false);
  EXPECT_EQ(reply.value("protocol", ""), ours) << registered->body;
  // A newer major and a malformed version: refused before anything else, naming both.
  for (const std::string& refused : {std::string("2.0"), std::string("0.9"), std::string("x")}) {
    SCOPED_TRACE(refused);
    httplib::Result answer =
        Request(c, refused, "/v1/agents/register", &registration, "agent-token");
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 400);
    const json body = json::parse(answer->body, nullptr, false);
    EXPECT_TRUE(wire::IsProtocolRefusal(body)) << answer->body;
    EXPECT_EQ(body.value("protocol", ""), ours);
    EXPECT_NE(body.value("error", "").find(refused), std::string::npos) << answer->body;
  }
  httplib::Result newer = Request(c, "2.0", "/v1/jobs");
  ASSERT_TRUE(newer);
  const json refusal = json::parse(newer->body, nullptr, false);
  EXPECT_NE(refusal.value("error", "").find("this controller speaks protocol " + ours),
            std::string::npos)
      << newer->body;
}

}  // namespace
}  // namespace sluice::integration
