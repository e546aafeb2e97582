// A Controller on a temporary state directory with a fake clock and a captured log, driven
// by direct calls (no sockets): the test seam of the server (R-SRV-1 … R-SRV-6).
#pragma once

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/model/config.h"
#include "server/controller.h"
#include "server/http_reply.h"
#include "store/store.h"
#include "testing/subprocess.h"

namespace sluice::server::testing {

using nlohmann::json;

// Two hosts of 4 slots, a fifo queue "normal" (on_host_loss requeue), a bounded_backfill
// queue "bf" (max_bypass 2) and a fifo queue "strict" whose jobs end on host loss.
inline core::ClusterConfig TestCluster() {
  core::ClusterConfig config;
  config.hosts = {core::HostSpec{.name = "h1", .slots = 4},
                  core::HostSpec{.name = "h2", .slots = 4}};
  config.queues = {
      core::QueueSpec{.name = "normal"},
      core::QueueSpec{.name = "bf", .policy = core::PolicyKind::kBoundedBackfill, .max_bypass = 2},
      core::QueueSpec{.name = "strict", .on_host_loss = core::OnHostLoss::kExit}};
  return config;
}

inline config::AuthConfig TestAuth() {
  return config::AuthConfig{.agent_token = "agent-secret",
                            .users = {{"alice", "alice-token", false},
                                      {"bob", "bob-token", false},
                                      {"root", "admin-token", true}},
                            .allow_dynamic_hosts = true};  // tests register hosts like x9
}

class ControllerHarness {
 public:
  explicit ControllerHarness(const std::string& dir, int64_t start_ms = 1'000'000'000'000)
      : dir_(dir), now_ms_(std::make_shared<int64_t>(start_ms)) {
    log_stream_ = std::make_shared<std::ostringstream>();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_stream_);
    log_ = std::make_shared<spdlog::logger>("test", sink);
    log_->set_pattern("%v");
  }

  // Opens the store and the controller (a restart when the directory has state).
  void Open(core::ClusterConfig config = TestCluster(), config::AuthConfig auth = TestAuth()) {
    auto store = store::Store::Open(dir_);
    ASSERT_TRUE(store) << store.error().ToString();
    store_ = std::move(*store);
    ControllerOptions options{.lease_ms = 10'000,
                              .host_loss_grace_ms = 5'000,
                              .agent_absence_ms = agent_absence_ms_,
                              .max_dispatch_attempts = 3,
                              .relaunch_ms = 3'000};
    options.estimate_jobs_per_queue = estimate_jobs_per_queue_;
    options.keep_ended_seconds = keep_ended_seconds_;
    options.keep_history_seconds = keep_history_seconds_;
    auto now = now_ms_;
    auto controller = Controller::Create(ControllerDeps{.config = config,
                                                        .auth = std::move(auth),
                                                        .store = store_.get(),
                                                        .options = options,
                                                        .clock = [now] { return *now; },
                                                        .log = log_});
    ASSERT_TRUE(controller) << controller.error().ToString();
    controller_ = std::move(*controller);
  }

  // Stops the controller as a crash would leave it: what was committed stays.
  void Close() {
    controller_.reset();
    store_.reset();
  }

  Controller& c() { return *controller_; }
  // ControllerOptions::agent_absence_ms for the next Open (default 0: the lease, so host loss
  // comes after lease + grace as these tests were written for).
  void set_agent_absence_ms(int64_t ms) { agent_absence_ms_ = ms; }
  // ControllerOptions::estimate_jobs_per_queue for the next Open.
  void set_estimate_jobs_per_queue(int64_t n) { estimate_jobs_per_queue_ = n; }
  // ControllerOptions::keep_ended_seconds and keep_history_seconds for the next Open.
  void set_keep_seconds(int64_t ended, int64_t history) {
    keep_ended_seconds_ = ended;
    keep_history_seconds_ = history;
  }
  store::Store& store() { return *store_; }
  void Advance(int64_t ms) { *now_ms_ += ms; }
  int64_t now_ms() const { return *now_ms_; }
  std::string log() const { return log_stream_->str(); }

  // Runs one scheduling pass and waits for its commit (launches become sendable).
  void Cycle() {
    controller_->Tick();
    controller_->FlushStore();
  }

  JobId Submit(const std::string& user, json body) {
    Reply r = controller_->Submit(Caller{.user = user}, body);
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.status == 200 ? r.body["id"].get<JobId>() : -1;
  }

  Reply Register(const std::string& host, json running = json::array(), int slots = 4) {
    return controller_->Register(
        {{"name", host}, {"slots", slots}, {"running", running}, {"epoch", 0}});
  }

  json Heartbeat(const std::string& host, json running = json::array(), json exited = json::array(),
                 json launch_failed = json::array()) {
    Reply r = controller_->Heartbeat(host, {{"epoch", controller_->epoch()},
                                            {"wait_ms", 0},
                                            {"running", running},
                                            {"exited", exited},
                                            {"launch_failed", launch_failed}});
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body;
  }

  json Job(JobId id) { return Reply(controller_->GetJob(id)).body; }
  std::string State(JobId id) { return Job(id)["state"].get<std::string>(); }

 private:
  std::string dir_;
  int64_t agent_absence_ms_ = 0;
  int64_t estimate_jobs_per_queue_ = ControllerOptions{}.estimate_jobs_per_queue;
  int64_t keep_ended_seconds_ = ControllerOptions{}.keep_ended_seconds;
  int64_t keep_history_seconds_ = ControllerOptions{}.keep_history_seconds;
  std::shared_ptr<int64_t> now_ms_;
  std::shared_ptr<std::ostringstream> log_stream_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Controller> controller_;
};

inline json Exited(JobId id, int code = 0, const std::string& cause = "exit") {
  return json::array({{{"job", id}, {"exit_code", code}, {"signal", nullptr}, {"cause", cause}}});
}

inline std::vector<JobId> LaunchedIds(const json& reply) {
  std::vector<JobId> ids;
  for (const json& l : reply["launch"]) ids.push_back(l["job"].get<JobId>());
  return ids;
}

inline std::vector<JobId> KilledIds(const json& reply) {
  std::vector<JobId> ids;
  for (const json& k : reply["kill"]) ids.push_back(k["job"].get<JobId>());
  return ids;
}

}  // namespace sluice::server::testing
