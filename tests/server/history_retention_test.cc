// Retention of ended jobs in the store (R-HA-5): a job's row is deleted once it ended more
// than keep_history_seconds ago, and not before; unfinished jobs stay. With SQLite the
// HistoryKeeper deletes them (Controller::PurgeHistoryNow runs its pass).
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <set>

#include "server/controller.h"
#include "server/http_reply.h"
#include "store/store.h"
#include "testing/subprocess.h"

namespace sluice::server {
namespace {

using nlohmann::json;

std::set<JobId> StoredIds(const std::string& dir) {
  auto store = store::Store::Open(dir);
  EXPECT_TRUE(store);
  if (!store) return {};
  auto snap = (*store)->Load();
  EXPECT_TRUE(snap);
  std::set<JobId> ids;
  if (snap) {
    for (const store::StoredJob& row : snap->jobs) ids.insert(row.id);
  }
  return ids;
}

// A controller on `store` with one 1-slot host h1, queue normal and user alice; ended jobs
// leave memory at once and the store after `keep_history_seconds`; its clock reads `now`.
Result<std::unique_ptr<Controller>> OpenController(store::Store* store,
                                                   int64_t keep_history_seconds,
                                                   std::shared_ptr<int64_t> now) {
  core::ClusterConfig config;
  config.hosts = {core::HostSpec{.name = "h1", .slots = 1}};
  config.queues = {core::QueueSpec{.name = "normal"}};
  return Controller::Create(ControllerDeps{
      .config = config,
      .auth = {.agent_token = "agent", .users = {{"alice", "alice-token", false}}},
      .store = store,
      .options = {.keep_ended_seconds = -1, .keep_history_seconds = keep_history_seconds},
      .clock = [now] { return *now; },
      .log = std::make_shared<spdlog::logger>("test",
                                              std::make_shared<spdlog::sinks::null_sink_mt>())});
}

TEST(HistoryRetentionTest, EndedJobsLeaveTheStoreAfterTheRetentionOnly) {
  sluice::testing::TempDir dir;
  auto now = std::make_shared<int64_t>(1'000'000'000'000);
  JobId done = 0;
  JobId waiting = 0;
  {
    auto store = store::Store::Open(dir.path().string());
    ASSERT_TRUE(store);
    auto c = OpenController(store->get(), 100, now);
    ASSERT_TRUE(c);
    Controller& controller = **c;
    const Caller alice{.user = "alice"};
    done = Reply(controller.Submit(alice, {{"command", "true"}})).body["id"];
    waiting = Reply(controller.Submit(alice, {{"command", "true"}, {"hold", true}})).body["id"];
    ASSERT_EQ(
        Reply(controller
            .Register({{"name", "h1"}, {"slots", 1}, {"running", json::array()}, {"epoch", 0}}))
            .status,
        200);
    controller.Tick();
    controller.FlushStore();
    const json hb = {{"epoch", controller.epoch()},
                     {"wait_ms", 0},
                     {"running", json::array()},
                     {"exited", json::array()},
                     {"launch_failed", json::array()}};
    ASSERT_EQ(Reply(controller.Heartbeat("h1", hb)).body["launch"].size(), 1u);
    json exited = hb;
    exited["exited"] =
        json::array({{{"job", done}, {"exit_code", 0}, {"signal", nullptr}, {"cause", "exit"}}});
    ASSERT_EQ(Reply(controller.Heartbeat("h1", exited)).status, 200);
    ASSERT_EQ(Reply(controller.GetJob(done)).body["state"], "DONE");
    *now += 60'000;  // ended 60 s ago: kept
    controller.Tick();
    controller.PurgeHistoryNow();  // SQLite: HistoryKeeper's pass (Tick's purge is etcd's)
    controller.FlushStore();
    *now += 50'000;  // 110 s: deleted at the next purge
    controller.Tick();
    controller.PurgeHistoryNow();
    controller.FlushStore();
  }
  const std::set<JobId> stored = StoredIds(dir.path().string());
  EXPECT_FALSE(stored.contains(done));
  EXPECT_TRUE(stored.contains(waiting));
}

TEST(HistoryRetentionTest, NothingIsDeletedBeforeTheRetention) {
  sluice::testing::TempDir dir;
  auto now = std::make_shared<int64_t>(1'000'000'000'000);
  JobId done = 0;
  {
    auto store = store::Store::Open(dir.path().string());
    ASSERT_TRUE(store);
    auto c = OpenController(store->get(), 1000, now);
    ASSERT_TRUE(c);
    Controller& controller = **c;
    done = Reply(controller.Submit(Caller{.user = "alice"}, {{"command", "true"}})).body["id"];
    ASSERT_EQ(Reply(controller.Cancel(Caller{.user = "alice"}, done)).status, 200);
    *now += 500'000;
    controller.Tick();
    controller.PurgeHistoryNow();
    controller.FlushStore();
  }
  EXPECT_TRUE(StoredIds(dir.path().string()).contains(done));
}

}  // namespace
}  // namespace sluice::server
