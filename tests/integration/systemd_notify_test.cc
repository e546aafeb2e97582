// `sluice server` and `sluice agent` under a stand-in for systemd (R-OPS-2, docs/systemd.md):
// real processes started with NOTIFY_SOCKET at a datagram socket the test binds
// (testing/notify_socket.h) and WATCHDOG_USEC=400000. The server says READY=1 once it serves
// its restored state, keeps the watchdog alive at least every WATCHDOG_USEC/2 and says
// STOPPING=1 on SIGTERM; a hung scheduling thread (SLUICE_SERVER_FAULT) stops the keep-alives
// while HTTP goes on; a standby says READY=1 with STATUS=standby… and, once it leads, a
// leader's status; the agent is ready before its controller answers and says when it
// registered; with JOURNAL_STREAM naming its standard error the server logs journald's lines.
// SIGHUP (`systemctl reload`) reloads the file between RELOADING=1 and READY=1; on a standby it
// is checked and put in force when the standby leads (R-OPS-3).
// Gaps are checked with slack for a loaded machine: the median against WATCHDOG_USEC/2, the
// longest against 2.5 x WATCHDOG_USEC (a process descheduled that long is not the server's
// fault); every wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"
#include "testing/etcd_cluster.h"
#include "testing/free_ports.h"
#include "testing/notify_socket.h"

namespace sluice::integration {
namespace {

using namespace std::chrono_literals;
using testing::KeepAliveTimes;
using testing::NotifySocket;
using Message = NotifySocket::Message;

constexpr std::chrono::milliseconds kWatchdog{400};
const std::string kWatchdogUsec = "WATCHDOG_USEC=400000";

std::function<bool(const Message&)> Field(const std::string& name, const std::string& value) {
  return [=](const Message& m) { return m.Has(name, value); };
}

std::function<bool(const Message&)> StatusStarting(const std::string& prefix) {
  return [=](const Message& m) {
    auto it = m.fields.find("STATUS");
    return it != m.fields.end() && it->second.starts_with(prefix);
  };
}

// Whether /healthz at `url` answers 200 within a second.
bool Healthy(const std::string& url) {
  httplib::Client client(url);
  client.set_connection_timeout(1s);
  client.set_read_timeout(1s);
  httplib::Result r = client.Get("/healthz");
  return r && r->status == 200;
}

// Waits until `count` keep-alives arrived from message `from` on.
bool WaitForKeepAlives(const NotifySocket& socket, size_t count, size_t from) {
  return Eventually([&] { return KeepAliveTimes(socket.Messages(), from).size() >= count; }, 30s,
                    20ms);
}

// The gaps between keep-alives, in milliseconds, sorted.
std::vector<int64_t> SortedGaps(const std::vector<NotifySocket::Clock::time_point>& times) {
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < times.size(); ++i) {
    gaps.push_back(
        std::chrono::duration_cast<std::chrono::milliseconds>(times[i] - times[i - 1]).count());
  }
  std::sort(gaps.begin(), gaps.end());
  return gaps;
}

// systemd asks for a keep-alive at least every WATCHDOG_USEC/2: the typical gap must be
// within it, and none may come near what a loaded machine cannot explain.
void ExpectKeptAlive(const NotifySocket& socket, size_t from) {
  const std::vector<int64_t> gaps = SortedGaps(KeepAliveTimes(socket.Messages(), from));
  ASSERT_GE(gaps.size(), 5u) << socket.Transcript();
  EXPECT_LE(gaps[gaps.size() / 2], (kWatchdog / 2).count()) << socket.Transcript();
  EXPECT_LT(gaps.back(), (kWatchdog * 5 / 2).count()) << socket.Transcript();
}

// Waits until no keep-alive has come for `quiet`; true once that held (within `timeout`).
bool WaitForSilence(const NotifySocket& socket, std::chrono::milliseconds quiet,
                    std::chrono::milliseconds timeout) {
  return Eventually(
      [&] {
        const auto times = KeepAliveTimes(socket.Messages());
        return !times.empty() && NotifySocket::Clock::now() - times.back() >= quiet;
      },
      timeout, 50ms);
}

// `sluice server` on the configuration and state of `c`, on its port, with `env` (NAME=VALUE)
// in its environment and its log in `log`; null when it printed no address within 20 s.
// (Cluster::StartServer, started once before, chose the port.)
std::unique_ptr<ChildProcess> StartServerWith(Cluster& c, const std::vector<std::string>& env,
                                              const std::filesystem::path& log) {
  std::vector<std::string> argv = {"/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), {testing::SluiceBinary(), "server", "--config",
                           (c.dir() / "cluster.yaml").string(), "--state", c.state_dir().string(),
                           "--listen", "127.0.0.1:" + std::to_string(c.port())});
  const std::filesystem::path out = log.string() + ".out";
  auto server = std::make_unique<ChildProcess>(argv, out, log);
  const bool listening = Eventually(
      [&] {
        return testing::ReadFile(out).value_or("").find("listening on ") != std::string::npos ||
               !server->Running();
      },
      20s);
  if (!listening || !server->Running()) return nullptr;
  return server;
}

std::string OneHostYaml() {
  return DefaultClusterYaml(R"(hosts:
  - {name: h1, slots: 1}
queues:
  - {name: normal}
)");
}

// The same with a second queue: what a reload brings.
std::string WithNightQueueYaml() {
  return DefaultClusterYaml(R"(hosts:
  - {name: h1, slots: 1}
queues:
  - {name: normal}
  - {name: night}
)");
}

// The queues the controller at `url` has (empty when it does not answer).
std::vector<std::string> QueueNamesAt(const std::string& url) {
  httplib::Client client(url);
  client.set_connection_timeout(2s);
  client.set_read_timeout(5s);
  httplib::Result r = client.Get("/v1/queues", {{"Authorization", "Bearer alice-token"}});
  std::vector<std::string> names;
  if (!r || r->status != 200) return names;
  const nlohmann::json queues = nlohmann::json::parse(r->body, nullptr, false);
  if (!queues.is_array()) return names;
  for (const nlohmann::json& q : queues) names.push_back(q.value("name", ""));
  return names;
}

// SIGHUP to `server`: RELOADING=1, then READY=1 again; the index of READY (nullopt: not seen).
std::optional<size_t> ReloadBySighup(ChildProcess& server, const NotifySocket& socket) {
  const size_t from = socket.Messages().size();
  server.Signal(SIGHUP);
  const std::optional<size_t> reloading = socket.WaitFor(Field("RELOADING", "1"), 20s, from);
  if (!reloading) return std::nullopt;
  return socket.WaitFor(Field("READY", "1"), 20s, *reloading);
}

TEST(SystemdNotifyTest, TheServerIsReadyOnceItServesItsStateKeptAliveAndSaysStopping) {
  Cluster c(OneHostYaml());
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  // A job the restarted server must have restored before it says it is ready.
  ASSERT_EQ(c.Cli({"submit", "--", "true"}).exit_code, 0) << c.Logs();
  c.KillServer(SIGTERM);

  NotifySocket socket;
  ASSERT_TRUE(socket.ok());
  const std::filesystem::path log = c.dir() / "logs" / "notified-server.err";
  std::unique_ptr<ChildProcess> server =
      StartServerWith(c, {"NOTIFY_SOCKET=" + socket.address(), kWatchdogUsec}, log);
  ASSERT_TRUE(server) << testing::ReadFile(log).value_or("");
  const std::optional<size_t> ready = socket.WaitFor(Field("READY", "1"), 20s);
  ASSERT_TRUE(ready) << socket.Transcript() << c.Logs();
  EXPECT_TRUE(Healthy(c.url())) << c.Logs();
  const Message said = socket.Messages()[*ready];
  EXPECT_EQ(said.fields.at("STATUS"),
            "serving: 0 of 1 hosts accept work; 0 jobs running, 1 pending, 0 held")
      << socket.Transcript();
  // Nothing but keep-alives before READY=1 (the watchdog only counts from it on).
  for (size_t i = 0; i < *ready; ++i) {
    EXPECT_TRUE(socket.Messages()[i].Has("WATCHDOG", "1")) << socket.Transcript();
  }

  ASSERT_TRUE(WaitForKeepAlives(socket, 15, *ready)) << socket.Transcript() << c.Logs();
  ExpectKeptAlive(socket, *ready);

  // `systemctl reload` (ExecReload sends SIGHUP): the file's new queue is in force.
  EXPECT_EQ(QueueNamesAt(c.url()), (std::vector<std::string>{"normal"}));
  ASSERT_TRUE(testing::WriteFile(c.dir() / "cluster.yaml", WithNightQueueYaml()));
  ASSERT_TRUE(ReloadBySighup(*server, socket)) << socket.Transcript() << c.Logs();
  EXPECT_EQ(QueueNamesAt(c.url()), (std::vector<std::string>{"normal", "night"}));

  server->Signal(SIGTERM);
  ASSERT_TRUE(socket.WaitFor(Field("STOPPING", "1"), 20s, *ready)) << socket.Transcript();
  const int status = server->Wait(20s);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << status << testing::ReadFile(log).value_or("");
}

TEST(SystemdNotifyTest, AHungSchedulingThreadStopsTheWatchdogWhileHttpAnswers) {
  Cluster c(OneHostYaml());
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;  // for its port
  c.KillServer(SIGTERM);
  const std::filesystem::path trigger = c.dir() / "hang-now";
  NotifySocket socket;
  ASSERT_TRUE(socket.ok());
  const std::filesystem::path log = c.dir() / "logs" / "hanging-server.err";
  std::unique_ptr<ChildProcess> server =
      StartServerWith(c,
                      {"NOTIFY_SOCKET=" + socket.address(), kWatchdogUsec,
                       "SLUICE_SERVER_FAULT=hang-scheduling-once:" + trigger.string()},
                      log);
  ASSERT_TRUE(server) << testing::ReadFile(log).value_or("");
  const std::optional<size_t> ready = socket.WaitFor(Field("READY", "1"), 20s);
  ASSERT_TRUE(ready) << socket.Transcript() << testing::ReadFile(log).value_or("");
  ASSERT_TRUE(WaitForKeepAlives(socket, 3, *ready)) << socket.Transcript() << c.Logs();

  ASSERT_TRUE(testing::WriteFile(trigger, ""));
  // Five watchdog intervals without a keep-alive: systemd would have restarted the server.
  ASSERT_TRUE(WaitForSilence(socket, kWatchdog * 5, 30s)) << socket.Transcript() << c.Logs();
  const auto last_keep_alive = KeepAliveTimes(socket.Messages()).back();
  ASSERT_TRUE(Eventually(
      [&] {
        return testing::ReadFile(log).value_or("").find("the scheduling thread hangs") !=
               std::string::npos;
      },
      10s))
      << testing::ReadFile(log).value_or("");
  // The rest of the server goes on: /healthz, and requests that take the controller's lock.
  EXPECT_TRUE(Healthy(c.url()));
  int status = 0;
  EXPECT_TRUE(c.Get("/v1/hosts", "admin-token", &status).is_array()) << status << c.Logs();
  EXPECT_EQ(c.Cli({"submit", "--", "true"}).exit_code, 0) << c.Logs();
  EXPECT_EQ(KeepAliveTimes(socket.Messages()).back(), last_keep_alive) << socket.Transcript();

  server->Signal(SIGTERM);
  EXPECT_TRUE(socket.WaitFor(Field("STOPPING", "1"), 20s, *ready)) << socket.Transcript();
  EXPECT_GE(server->Wait(20s), 0) << testing::ReadFile(log).value_or("");
}

TEST(SystemdNotifyTest, UnderJournaldTheServerLogsPrioritiesWithoutTimestamps) {
  Cluster c(OneHostYaml());
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;  // for its port
  c.KillServer(SIGTERM);
  // The file the server's stderr will be: JOURNAL_STREAM names it as systemd names its stream.
  const std::filesystem::path log = c.dir() / "logs" / "journald-server.err";
  ASSERT_TRUE(testing::WriteFile(log, ""));
  struct stat st {};
  ASSERT_EQ(stat(log.c_str(), &st), 0);
  std::unique_ptr<ChildProcess> server = StartServerWith(
      c, {"JOURNAL_STREAM=" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)}, log);
  ASSERT_TRUE(server) << testing::ReadFile(log).value_or("");
  ASSERT_TRUE(Eventually(
      [&] { return testing::ReadFile(log).value_or("").find("dashboard:") != std::string::npos; },
      20s))
      << testing::ReadFile(log).value_or("");
  server->Stop(20s);
  std::istringstream lines(testing::ReadFile(log).value_or(""));
  const std::regex journald_line(R"(<[0-7]>(trace|debug|info|warning|error|critical) .*)");
  int checked = 0;
  for (std::string line; std::getline(lines, line); ++checked) {
    EXPECT_TRUE(std::regex_match(line, journald_line)) << line;
  }
  EXPECT_GE(checked, 2);
  EXPECT_NE(testing::ReadFile(log).value_or("").find("<6>info dashboard:"), std::string::npos);
}

TEST(SystemdNotifyTest, AnAgentIsReadyBeforeItsControllerAnswersAndSaysWhenItRegisters) {
  Cluster c(OneHostYaml());
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;  // for its port
  c.KillServer(SIGTERM);

  NotifySocket socket;
  ASSERT_TRUE(socket.ok());
  c.StartAgent("h1", 1, "", {}, {"NOTIFY_SOCKET=" + socket.address(), kWatchdogUsec});
  // A host that boots before its controller is up is started all the same.
  const std::optional<size_t> ready = socket.WaitFor(Field("READY", "1"), 20s);
  ASSERT_TRUE(ready) << socket.Transcript() << c.Logs();
  EXPECT_TRUE(StatusStarting("registering")(socket.Messages()[*ready])) << socket.Transcript();

  ASSERT_TRUE(c.StartServer(&error)) << error;
  ASSERT_TRUE(socket.WaitFor(StatusStarting("registered with " + c.url()), 30s, *ready))
      << socket.Transcript() << c.Logs();
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; }, 20s)) << c.Logs();
  ASSERT_TRUE(WaitForKeepAlives(socket, 15, *ready)) << socket.Transcript() << c.Logs();
  ExpectKeptAlive(socket, *ready);

  c.StopAgent("h1", SIGTERM);
  EXPECT_TRUE(socket.WaitFor(Field("STOPPING", "1"), 20s, *ready)) << socket.Transcript();
  EXPECT_FALSE(c.AgentRunning("h1"));
}

// A controller of an etcd store that is not the leader: it serves as a standby (redirects,
// /healthz) and says so; once the leader is gone it leads and says that.
TEST(SystemdNotifyTest, AStandbyIsReadyAsAStandbyAndSaysWhenItLeads) {
  if (auto unavailable = testing::EtcdCluster::Unavailable()) GTEST_SKIP() << *unavailable;
  std::string error;
  std::unique_ptr<testing::EtcdCluster> etcd = testing::EtcdCluster::Start(1, error);
  ASSERT_TRUE(etcd) << error;
  testing::TempDir dir;
  ASSERT_TRUE(testing::WriteFile(dir.path() / "cluster.yaml", OneHostYaml()));
  const std::vector<int> ports = testing::FreeLoopbackPorts(2);
  const auto start = [&](int i, const std::vector<std::string>& env) {
    std::vector<std::string> argv;
    if (!env.empty()) argv.push_back("/usr/bin/env");
    argv.insert(argv.end(), env.begin(), env.end());
    const std::string name = "server" + std::to_string(i);
    argv.insert(
        argv.end(),
        {testing::SluiceBinary(), "server", "--config", (dir.path() / "cluster.yaml").string(),
         "--store", etcd->Url("/notify"), "--listen", "127.0.0.1:" + std::to_string(ports[i]),
         "--leader-lease-seconds", "1"});
    return std::make_unique<ChildProcess>(argv, dir.path() / (name + ".out"),
                                          dir.path() / (name + ".err"));
  };
  const auto url = [&](int i) { return "http://127.0.0.1:" + std::to_string(ports[i]); };
  const auto logs = [&] {
    return testing::ReadFile(dir.path() / "server0.err").value_or("") +
           testing::ReadFile(dir.path() / "server1.err").value_or("");
  };
  const auto role = [&](int i) {
    httplib::Client client(url(i));
    client.set_connection_timeout(1s);
    client.set_read_timeout(1s);
    httplib::Result r = client.Get("/healthz");
    if (!r || r->status != 200) return std::string();
    return nlohmann::json::parse(r->body, nullptr, false).value("role", std::string());
  };

  std::unique_ptr<ChildProcess> leader = start(0, {});
  ASSERT_TRUE(Eventually([&] { return role(0) == "leader"; }, 30s)) << logs();
  NotifySocket socket;
  ASSERT_TRUE(socket.ok());
  std::unique_ptr<ChildProcess> standby =
      start(1, {"NOTIFY_SOCKET=" + socket.address(), kWatchdogUsec});
  const std::optional<size_t> ready = socket.WaitFor(Field("READY", "1"), 20s);
  ASSERT_TRUE(ready) << socket.Transcript() << logs();
  EXPECT_TRUE(StatusStarting("standby")(socket.Messages()[*ready])) << socket.Transcript();
  EXPECT_EQ(role(1), "standby") << logs();
  ASSERT_TRUE(WaitForKeepAlives(socket, 10, *ready)) << socket.Transcript() << logs();
  ExpectKeptAlive(socket, *ready);

  // A reload on the standby: the file is checked now and put in force when it leads; the
  // leader, not reloaded, keeps its queues.
  ASSERT_TRUE(testing::WriteFile(dir.path() / "cluster.yaml", WithNightQueueYaml()));
  const std::optional<size_t> reloaded = ReloadBySighup(*standby, socket);
  ASSERT_TRUE(reloaded) << socket.Transcript() << logs();
  EXPECT_TRUE(StatusStarting("standby")(socket.Messages()[*reloaded])) << socket.Transcript();
  EXPECT_NE(logs().find("this standby puts it in force when it leads"), std::string::npos)
      << logs();
  EXPECT_EQ(QueueNamesAt(url(0)), (std::vector<std::string>{"normal"}));

  leader->Signal(SIGKILL);
  ASSERT_GE(leader->Wait(10s), 0);
  const std::optional<size_t> leads = socket.WaitFor(StatusStarting("leader (epoch "), 30s, *reloaded);
  ASSERT_TRUE(leads) << socket.Transcript() << logs();
  EXPECT_TRUE(Eventually(
      [&] { return QueueNamesAt(url(1)) == std::vector<std::string>{"normal", "night"}; }, 30s))
      << logs();
  // The scheduling thread keeps the watchdog alive now.
  ASSERT_TRUE(WaitForKeepAlives(socket, 10, *leads)) << socket.Transcript() << logs();
  ExpectKeptAlive(socket, *leads);

  standby->Signal(SIGTERM);
  EXPECT_TRUE(socket.WaitFor(Field("STOPPING", "1"), 20s, *leads)) << socket.Transcript();
  EXPECT_GE(standby->Wait(20s), 0) << logs();
}

}  // namespace
}  // namespace sluice::integration
