// Agent protocol loop against a scripted fake controller (an in-process httplib server on a
// loopback port): launch and exit reports re-sent until acknowledged, epoch fencing, the
// lease (self-fencing), re-registration after 404, launch deduplication, kill orders, launch
// failures and a refused token. Jobs are real short processes; waits are bounded polls.
#include "agent/agent.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <pwd.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::agent {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using sluice::testing::Eventually;
using sluice::testing::ReadFile;
using sluice::testing::TempDir;

// A scripted controller. `on_heartbeat` builds each heartbeat's response body from the
// request body; `heartbeat_status` overrides the HTTP status (e.g. 503 for a partition).
class FakeController {
 public:
  FakeController() {
    server_.Post("/v1/agents/register", [this](const httplib::Request& req,
                                               httplib::Response& res) {
      std::lock_guard lock(mu_);
      if (req.get_header_value("Authorization") != "Bearer agent-token") {
        res.status = 401;
        res.set_content(R"({"error": "unknown token"})", "application/json");
        return;
      }
      registers_.push_back(json::parse(req.body));
      if (!refused_field_.empty() && registers_.back().contains(refused_field_)) {
        res.status = 400;  // as a controller older than the field answers
        res.set_content(json{{"error", refused_field_ + ": unknown field"}}.dump(),
                        "application/json");
        return;
      }
      res.set_content(
          json{{"epoch", epoch_}, {"lease_seconds", lease_seconds_}, {"heartbeat_ms", 50}}.dump(),
          "application/json");
    });
    server_.Post(R"(/v1/agents/([^/]+)/heartbeat)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   json body = json::parse(req.body);
                   std::unique_lock lock(mu_);
                   heartbeats_.push_back(body);
                   if (!refused_field_.empty() && body.contains(refused_field_)) {
                     res.status = 400;  // as a controller older than the field answers
                     res.set_content(json{{"error", refused_field_ + ": unknown field"}}.dump(),
                                     "application/json");
                     return;
                   }
                   if (heartbeat_status_ != 200) {
                     res.status = heartbeat_status_;
                     res.set_content(R"({"error": "scripted"})", "application/json");
                     return;
                   }
                   json reply = {{"epoch", epoch_}};
                   if (on_heartbeat_) reply = on_heartbeat_(body, reply);
                   lock.unlock();
                   // A long poll that has nothing to say waits a little, like the real one.
                   if (reply.size() == 1 && body.value("wait_ms", 0) > 0) {
                     std::this_thread::sleep_for(20ms);
                   }
                   res.set_content(reply.dump(), "application/json");
                 });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeController() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void Script(std::function<json(const json& request, json reply)> fn) {
    std::lock_guard lock(mu_);
    on_heartbeat_ = std::move(fn);
  }
  void SetHeartbeatStatus(int status) {
    std::lock_guard lock(mu_);
    heartbeat_status_ = status;
  }
  // Registrations and heartbeats with this member are refused as an older controller refuses
  // a field it does not know.
  void RefuseField(const std::string& field) {
    std::lock_guard lock(mu_);
    refused_field_ = field;
  }
  // The heartbeats received, in order.
  std::vector<json> HeartbeatBodies() {
    std::lock_guard lock(mu_);
    return heartbeats_;
  }
  void SetEpoch(int64_t epoch) {
    std::lock_guard lock(mu_);
    epoch_ = epoch;
  }
  void SetLease(int seconds) {
    std::lock_guard lock(mu_);
    lease_seconds_ = seconds;
  }
  size_t registers() {
    std::lock_guard lock(mu_);
    return registers_.size();
  }
  json last_register() {
    std::lock_guard lock(mu_);
    return registers_.empty() ? json() : registers_.back();
  }
  std::vector<json> RegisterBodies() {
    std::lock_guard lock(mu_);
    return registers_;
  }
  // Every exit report received for `job`, in order.
  std::vector<json> ExitReports(int64_t job) {
    std::lock_guard lock(mu_);
    std::vector<json> out;
    for (const json& body : heartbeats_) {
      for (const json& exit : body["exited"]) {
        if (exit["job"] == job) out.push_back(exit);
      }
      for (const json& failure : body["launch_failed"]) {
        if (failure["job"] == job) out.push_back(failure);
      }
    }
    return out;
  }
  size_t heartbeats() {
    std::lock_guard lock(mu_);
    return heartbeats_.size();
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  int64_t epoch_ = 1;
  int lease_seconds_ = 10;
  int heartbeat_status_ = 200;
  std::string refused_field_;
  std::vector<json> registers_;
  std::vector<json> heartbeats_;
  std::function<json(const json&, json)> on_heartbeat_;
};

// Runs an agent on its own thread until the fixture ends.
class AgentRun {
 public:
  AgentRun(const FakeController& controller, const std::string& token = "agent-token",
           std::optional<wire::GpuReport> gpus = std::nullopt) {
    AgentOptions options{
        .server = controller.url(), .token = token, .fence_grace = 200ms, .tick = 5ms};
    options.host = {.name = "h1", .slots = 4};
    options.gpus = std::move(gpus);
    options.runner.allow_root = true;  // launches name the test's own account (root here)
    agent_ = std::make_unique<Agent>(std::move(options));
    thread_ = std::thread([this] { exit_code_ = agent_->Run(stop_); });
  }
  ~AgentRun() { Stop(); }
  int Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return exit_code_;
  }
  bool finished() const { return exit_code_ >= 0; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> exit_code_{-1};
  std::unique_ptr<Agent> agent_;
  std::thread thread_;
};

// The account the test runs as: the agent runs jobs as their account, and only a root agent
// may switch to another one.
std::string OwnAccount() {
  const passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : "root";
}

json Launch(int64_t job, const std::string& command, const std::string& cwd) {
  return {{"job", job},           {"argv", {"/bin/sh", "-c", command}},
          {"command", command},   {"cwd", cwd},
          {"output", ""},         {"error", ""},
          {"run_limit", nullptr}, {"env", {{"SLUICE_JOB_ID", std::to_string(job)}}},
          {"user", "alice"},      {"account", OwnAccount()}};
}

TEST(AgentTest, RunsALaunchAndResendsItsExitUntilAcknowledged) {
  TempDir dir;
  FakeController controller;
  std::atomic<int> heartbeats_after_exit{0};
  std::atomic<bool> launched{false};
  controller.Script([&](const json& request, json reply) {
    if (!launched.exchange(true))
      reply["launch"] = {Launch(1, "echo $SLUICE_JOB_ID > out; exit 3", dir.path())};
    if (!request["exited"].empty() && ++heartbeats_after_exit >= 3) reply["ack"] = {1};
    return reply;
  });
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return heartbeats_after_exit >= 3; }));
  const size_t reports = controller.ExitReports(1).size();
  EXPECT_GE(reports, 3u);
  // Acknowledged: a few more heartbeats go by without the report.
  const size_t seen = controller.heartbeats();
  ASSERT_TRUE(Eventually([&] { return controller.heartbeats() >= seen + 3; }));
  EXPECT_LE(controller.ExitReports(1).size(), reports + 1);  // at most one in flight
  const json exit = controller.ExitReports(1).front();
  EXPECT_EQ(exit["exit_code"], 3);
  EXPECT_EQ(exit["cause"], "exit");
  EXPECT_TRUE(exit["signal"].is_null());
  EXPECT_EQ(ReadFile(dir.path() / "out"), "1\n");
}

// Heartbeats carry the host's load (issue 47.9); a controller older than the field refuses
// it, and the agent then sends none rather than lose its lease over it.
TEST(AgentTest, SendsItsLoadUnlessTheControllerRefusesTheField) {
  FakeController controller;
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return controller.heartbeats() >= 2; }));
  const json first = controller.HeartbeatBodies().front();
  ASSERT_TRUE(first.contains("load")) << first.dump();
  EXPECT_GE(first["load"]["r1m"].get<double>(), 0);

  controller.RefuseField("load");
  const size_t refused_from = controller.heartbeats();
  ASSERT_TRUE(Eventually([&] {
    const std::vector<json> bodies = controller.HeartbeatBodies();
    size_t without = 0;
    for (size_t i = refused_from; i < bodies.size(); ++i) without += !bodies[i].contains("load");
    return without >= 3;  // accepted again, heartbeat after heartbeat
  }));
  EXPECT_EQ(controller.registers(), 1u);  // never lost its registration over it
}

// The GPUs detected at start go with the registration (R-GPU-1); a controller older than the
// field refuses it, and the agent then registers without them rather than not at all.
TEST(AgentTest, RegistersItsGpusUnlessTheControllerRefusesTheField) {
  FakeController controller;
  controller.RefuseField("gpus");
  AgentRun agent(controller, "agent-token",
                 wire::GpuReport{.probe = wire::GpuProbe::kNvidiaSmi,
                                 .devices = {{.index = 0, .model = "A100"}}});
  ASSERT_TRUE(Eventually([&] { return controller.heartbeats() >= 2; }));
  const std::vector<json> registers = controller.RegisterBodies();
  ASSERT_EQ(registers.size(), 2u);
  ASSERT_TRUE(registers[0].contains("gpus")) << registers[0].dump();
  EXPECT_EQ(registers[0]["gpus"]["probe"], "nvidia-smi");
  EXPECT_EQ(registers[0]["gpus"]["devices"][0]["model"], "A100");
  EXPECT_FALSE(registers[1].contains("gpus")) << registers[1].dump();
}

TEST(AgentTest, IgnoresResponsesFromAnOlderEpoch) {
  TempDir dir;
  FakeController controller;
  controller.SetEpoch(5);
  std::atomic<int> calls{0};
  controller.Script([&](const json&, json reply) {
    const int call = ++calls;
    if (call <= 3) {
      reply["epoch"] = 4;  // an older controller's answer: must be ignored
      reply["launch"] = {Launch(2, "touch stale", dir.path())};
    } else if (call == 4) {
      reply["launch"] = {Launch(3, "touch fresh", dir.path())};
    }
    return reply;
  });
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(dir.path() / "fresh"); }));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "stale"));
}

TEST(AgentTest, RunsARepeatedLaunchOnlyOnce) {
  TempDir dir;
  FakeController controller;
  std::atomic<int> calls{0};
  controller.Script([&](const json& request, json reply) {
    if (++calls <= 5) reply["launch"] = {Launch(4, "echo run >> runs; sleep 0.2", dir.path())};
    if (!request["exited"].empty()) reply["ack"] = {4};
    return reply;
  });
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return !controller.ExitReports(4).empty() && calls > 8; }));
  EXPECT_EQ(ReadFile(dir.path() / "runs"), "run\n");
}

TEST(AgentTest, KillsOnRequest) {
  TempDir dir;
  FakeController controller;
  std::atomic<int> calls{0};
  controller.Script([&](const json& request, json reply) {
    const int call = ++calls;
    if (call == 1) reply["launch"] = {Launch(5, "exec sleep 30", dir.path())};
    bool running = false;
    for (const json& id : request["running"]) running = running || id == 5;
    if (call > 1 && running) reply["kill"] = {{{"job", 5}, {"grace_seconds", 1}}};
    if (!request["exited"].empty()) reply["ack"] = {5};
    return reply;
  });
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return !controller.ExitReports(5).empty(); }));
  const json exit = controller.ExitReports(5).front();
  EXPECT_EQ(exit["cause"], "killed");
  EXPECT_EQ(exit["signal"], SIGTERM);
  EXPECT_EQ(exit["exit_code"], 128 + SIGTERM);
}

TEST(AgentTest, ReportsAFailedLaunch) {
  TempDir dir;
  FakeController controller;
  std::atomic<bool> launched{false};
  controller.Script([&](const json& request, json reply) {
    if (!launched.exchange(true)) reply["launch"] = {Launch(6, "true", dir.path() / "missing")};
    if (!request["launch_failed"].empty()) reply["ack"] = {6};
    return reply;
  });
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return !controller.ExitReports(6).empty(); }));
  const json failure = controller.ExitReports(6).front();
  EXPECT_TRUE(failure["message"].get<std::string>().starts_with("chdir: ")) << failure;
}

// R-SEC-1: the agent never picks an identity itself.
TEST(AgentTest, ALaunchWithoutAnAccountIsAFailedLaunch) {
  TempDir dir;
  FakeController controller;
  std::atomic<bool> launched{false};
  controller.Script([&](const json& request, json reply) {
    if (!launched.exchange(true)) {
      json launch = Launch(9, "touch ran", dir.path());
      launch.erase("account");
      reply["launch"] = {launch};
    }
    if (!request["launch_failed"].empty()) reply["ack"] = {9};
    return reply;
  });
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return !controller.ExitReports(9).empty(); }));
  const json failure = controller.ExitReports(9).front();
  EXPECT_NE(failure["message"].get<std::string>().find("no account"), std::string::npos) << failure;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "ran"));
}

// R-SEC-4: the exit report carries the job's CPU time and memory peak.
TEST(AgentTest, TheExitReportCarriesCpuAndMemory) {
  TempDir dir;
  FakeController controller;
  std::atomic<bool> launched{false};
  controller.Script([&](const json& request, json reply) {
    if (!launched.exchange(true)) reply["launch"] = {Launch(10, "true", dir.path())};
    if (!request["exited"].empty()) reply["ack"] = {10};
    return reply;
  });
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return !controller.ExitReports(10).empty(); }));
  const json exit = controller.ExitReports(10).front();
  EXPECT_TRUE(exit["cpu_seconds"].is_number()) << exit;
  EXPECT_TRUE(exit["max_rss_mb"].is_number()) << exit;
}

TEST(AgentTest, FencesItselfWhenTheLeaseExpires) {
  TempDir dir;
  FakeController controller;
  controller.SetLease(1);
  std::atomic<bool> launched{false};
  controller.Script([&](const json& request, json reply) {
    if (!launched.exchange(true)) {
      reply["launch"] = {Launch(7, "echo $$ > pid; touch started; exec sleep 30", dir.path())};
    }
    if (!request["exited"].empty()) reply["ack"] = {7};
    return reply;
  });
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(dir.path() / "started"); }));
  controller.SetHeartbeatStatus(503);  // cut off: no successful heartbeat from now on
  // The agent kills the job on its own, while still cut off; the report arrives once the
  // controller answers again.
  const pid_t pid = std::stoi(ReadFile(dir.path() / "pid").value_or("0"));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(Eventually([&] { return !std::filesystem::exists("/proc/" + std::to_string(pid)); }));
  controller.SetHeartbeatStatus(200);
  ASSERT_TRUE(Eventually([&] { return !controller.ExitReports(7).empty(); }));
  // Not the job's doing: the controller handles it like a host loss (issue 19).
  EXPECT_EQ(controller.ExitReports(7).front()["cause"], "fenced");
}

TEST(AgentTest, RegistersAgainAfterA404WithItsRunningJobs) {
  TempDir dir;
  FakeController controller;
  std::atomic<bool> launched{false};
  controller.Script([&](const json&, json reply) {
    if (!launched.exchange(true)) reply["launch"] = {Launch(8, "exec sleep 30", dir.path())};
    return reply;
  });
  AgentRun agent(controller);
  ASSERT_TRUE(Eventually([&] { return controller.heartbeats() > 3; }));
  controller.SetHeartbeatStatus(404);
  ASSERT_TRUE(Eventually([&] { return controller.registers() >= 2; }));
  EXPECT_EQ(controller.last_register()["running"], json::array({8}));
  EXPECT_EQ(controller.last_register()["name"], "h1");
  EXPECT_EQ(controller.last_register()["slots"], 4);
}

TEST(AgentTest, StopsWhenTheTokenIsRefused) {
  FakeController controller;
  AgentRun agent(controller, "wrong-token");
  ASSERT_TRUE(Eventually([&] { return agent.finished(); }));
  EXPECT_EQ(agent.Stop(), 1);
}

}  // namespace
}  // namespace sluice::agent
