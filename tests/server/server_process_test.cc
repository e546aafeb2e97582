// `sluice server` as a process: it prints its port, refuses a locked state directory, and
// loses nothing it acknowledged when killed with SIGKILL (R-SRV-1). Loopback only, bounded,
// stopped by PID.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "testing/build_paths.h"
#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;

constexpr const char* kConfig = R"(hosts:
  - {name: h1, slots: 4}
queues:
  - {name: normal}
auth:
  agent_token: agent-secret
  users:
    - {name: alice, token: alice-token, unix_user: nobody}
)";

struct Process {
  pid_t pid = -1;
  int port = 0;
};

// Starts `sluice server` and reads its `listening on HOST:PORT` line (at most 30 s).
Process StartServer(const std::filesystem::path& dir) {
  int out[2];
  if (pipe(out) != 0) return {};
  const std::string config = (dir / "cluster.yaml").string();
  const std::string state = (dir / "state").string();
  const std::string log = (dir / "server.log").string();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    int err = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(err, 2);
    close(out[0]);
    execl(sluice::testing::SluiceBinary(), sluice::testing::SluiceBinary(), "server", "--config",
          config.c_str(), "--state", state.c_str(), "--listen", "127.0.0.1:0",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  Process p{.pid = pid};
  std::string line;
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  ::sluice::testing::Eventually(
      [&] {
        char c = 0;
        ssize_t n = 0;
        while ((n = read(out[0], &c, 1)) == 1) {
          line += c;
          if (c == '\n') return true;
        }
        return n == 0;  // it exited; -1 (EAGAIN): nothing yet
      },
      std::chrono::seconds(30), std::chrono::milliseconds(10));
  close(out[0]);
  const std::string prefix = "listening on 127.0.0.1:";
  if (line.rfind(prefix, 0) == 0) p.port = std::stoi(line.substr(prefix.size()));
  return p;
}

int Wait(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(ServerProcessTest, ASecondServerOnTheSameStateDirectoryExitsWithAMessage) {
  TempDir dir;
  std::ofstream(dir.path() / "cluster.yaml") << kConfig;
  Process first = StartServer(dir.path());
  ASSERT_GT(first.port, 0);
  Process second = StartServer(dir.path());
  EXPECT_EQ(second.port, 0);
  const int status = Wait(second.pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  kill(first.pid, SIGTERM);
  EXPECT_TRUE(WIFEXITED(Wait(first.pid)));
  auto log = ::sluice::testing::ReadFile(dir.path() / "server.log");
  ASSERT_TRUE(log);
  EXPECT_NE(log->find("locked by another sluice server"), std::string::npos) << *log;
}

TEST(ServerProcessTest, EverythingAcknowledgedSurvivesSigkill) {
  TempDir dir;
  std::ofstream(dir.path() / "cluster.yaml") << kConfig;
  std::set<int64_t> acked;
  for (int round = 0; round < 3; ++round) {
    Process server = StartServer(dir.path());
    ASSERT_GT(server.port, 0) << "round " << round;
    std::atomic<bool> stop = false;
    std::mutex mu;
    std::vector<std::thread> clients;
    for (int t = 0; t < 4; ++t) {
      clients.emplace_back([&, t] {
        httplib::Client client("127.0.0.1", server.port);
        client.set_connection_timeout(2);
        client.set_read_timeout(2);
        httplib::Headers auth{{"Authorization", "Bearer alice-token"}};
        for (int i = 0; !stop && i < 10'000; ++i) {
          const bool batch = (i + t) % 3 == 0;
          auto r = batch ? client.Post("/v1/jobs/batch", auth,
                                       R"({"jobs":[{"command":"a","tasks":3},{"command":"b"}]})",
                                       "application/json")
                         : client.Post("/v1/jobs", auth, R"({"command":"c","hold":true})",
                                       "application/json");
          if (!r || r->status != 201) break;  // killed
          json body = json::parse(r->body);
          std::lock_guard lock(mu);
          if (batch) {
            for (const json& id : body["ids"]) acked.insert(id.get<int64_t>());
          } else {
            acked.insert(body["id"].get<int64_t>());
          }
        }
      });
    }
    // Kill after a number of acknowledgements that differs each round.
    const size_t kill_at = 150 * (round + 1) + 37 * round;
    EXPECT_TRUE(::sluice::testing::Eventually([&] {
      std::lock_guard lock(mu);
      return acked.size() >= kill_at;
    })) << "round " << round << ": fewer than " << kill_at << " acknowledged";
    kill(server.pid, SIGKILL);
    Wait(server.pid);
    stop = true;
    for (auto& c : clients) c.join();
  }
  Process server = StartServer(dir.path());
  ASSERT_GT(server.port, 0);
  httplib::Client client("127.0.0.1", server.port);
  auto r = client.Get("/v1/jobs", httplib::Headers{{"Authorization", "Bearer alice-token"}});
  ASSERT_TRUE(r);
  std::set<int64_t> stored;
  for (const json& job : json::parse(r->body)) stored.insert(job["id"].get<int64_t>());
  kill(server.pid, SIGTERM);
  Wait(server.pid);
  ASSERT_GE(acked.size(), 150u);
  for (int64_t id : acked) EXPECT_TRUE(stored.contains(id)) << "acknowledged job " << id << " lost";
}

}  // namespace
}  // namespace sluice::server
