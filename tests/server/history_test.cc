// History (R-UX-6): ended jobs stay queryable from the store after they leave the
// controller's memory and across restarts; filters combine; paging returns every row once;
// the keeper deletes rows past --keep-history-days.
#include "store/history.h"

#include <gtest/gtest.h>

#include <set>

#include "base/array_ids.h"
#include "server/controller.h"
#include "server/http_reply.h"
#include "server/controller_fixture.h"
#include "server/history_api.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::LaunchedIds;

// Runs `id` on h1 to its exit with `code`; the agent reports `usage` (cpu_seconds,
// max_rss_mb, message) with the exit.
void RunToExit(ControllerHarness& h, JobId id, int code, const json& usage = json::object()) {
  h.Cycle();
  ASSERT_EQ(LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{id});
  h.Heartbeat("h1", {id});
  h.Advance(5'000);
  json exited = Exited(id, code);
  exited[0].update(usage);
  h.Heartbeat("h1", json::array(), exited);
  h.c().FlushStore();
}

json History(ControllerHarness& h, std::map<std::string, std::string> params = {}) {
  Reply r = h.c().History(params);
  EXPECT_EQ(r.status, 200) << r.Json().dump();
  return r.Json();
}

const json* Row(const json& page, JobId id) {
  for (const json& row : page["jobs"]) {
    if (row["id"] == id) return &row;
  }
  return nullptr;
}

TEST(HistoryTest, JobsEndedBeforeARestartAndPastRetentionAreListedWithTheirAccounting) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId done = h.Submit("alice", {{"command", "a"}, {"tasks", 2}, {"name", "first"}});
  RunToExit(h, done, 0, {{"cpu_seconds", 7.25}, {"max_rss_mb", 123.4}});
  const JobId failed = h.Submit("bob", {{"command", "b"}, {"queue", "strict"}});
  RunToExit(h, failed, 3, {{"message", "MEM_LIMIT: limit 100 MB, peak 101 MB"}});
  const JobId cancelled = h.Submit("alice", {{"command", "c"}, {"hold", true}});
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, cancelled)).status, 200);
  // Past the in-memory retention (an hour), then a restart: only the store has them.
  h.Advance(2 * 3'600'000);
  h.Cycle();
  h.Close();
  h.Open();
  EXPECT_EQ(Reply(h.c().GetJob(done)).status, 404);

  const json page = History(h);
  ASSERT_EQ(page["jobs"].size(), 3u) << page.dump();
  EXPECT_TRUE(page["next_cursor"].is_null());
  // Newest end first: the cancel came last.
  EXPECT_EQ(page["jobs"][0]["id"], cancelled);
  const json& a = *Row(page, done);
  EXPECT_EQ(a["state"], "DONE");
  EXPECT_EQ(a["exit_code"], 0);
  EXPECT_EQ(a["cause"], "");
  EXPECT_EQ(a["user"], "alice");
  EXPECT_EQ(a["queue"], "normal");  // stored without a queue: the default
  EXPECT_EQ(a["name"], "first");
  EXPECT_EQ(a["slots"], 2);
  EXPECT_EQ(a["hosts"], json::parse(R"([{"host": "h1", "slots": 2}])"));
  EXPECT_EQ(a["run_seconds"], 5);
  EXPECT_EQ(a["end_time"].get<int64_t>() - a["start_time"].get<int64_t>(), 5);
  // The accounting the agent reported (store.h's jobs columns), also after the restart.
  EXPECT_EQ(a["cpu_seconds"], 7.25) << a.dump();
  EXPECT_EQ(a["max_rss_mb"], 123) << a.dump();
  EXPECT_EQ(a["message"], "");
  const json& b = *Row(page, failed);
  EXPECT_EQ(b["state"], "EXIT");
  EXPECT_EQ(b["exit_code"], 3);
  EXPECT_EQ(b["cause"], "NON_ZERO_EXIT");
  EXPECT_EQ(b["queue"], "strict");
  EXPECT_TRUE(b["cpu_seconds"].is_null()) << b.dump();  // not reported: not recorded
  EXPECT_EQ(b["message"], "MEM_LIMIT: limit 100 MB, peak 101 MB");
  const json& c = *Row(page, cancelled);
  EXPECT_EQ(c["state"], "CANCELLED");
  EXPECT_TRUE(c["start_time"].is_null());
  EXPECT_EQ(c["slots"], 0);
  // --summary's cpu-hours come from the same column: alice's one job that reported it.
  const Reply summary = h.c().HistorySummary({{"user", "alice"}});
  ASSERT_EQ(summary.status, 200);
  EXPECT_DOUBLE_EQ(summary.Json()["total"]["cpu_hours"].get<double>(), 7.25 / 3600)
      << summary.Json().dump();
}

TEST(HistoryTest, FiltersCombineAndPagingReturnsEveryRowOnce) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  std::map<std::string, std::set<JobId>> by_user_queue;
  // Cancelled jobs end at distinct and at equal times (the cursor's tie-break is the id).
  for (int i = 0; i < 23; ++i) {
    const std::string user = i % 2 == 0 ? "alice" : "bob";
    const std::string queue = i % 3 == 0 ? "strict" : "normal";
    const JobId id = h.Submit(user, {{"command", "x"}, {"queue", queue}, {"hold", true}});
    ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = user}, id)).status, 200);
    by_user_queue[user + "/" + queue].insert(id);
    if (i % 4 == 0) h.Advance(1'000);
  }
  h.c().FlushStore();

  const json alice_strict = History(h, {{"user", "alice"}, {"queue", "strict"}});
  std::set<JobId> got;
  for (const json& row : alice_strict["jobs"]) got.insert(row["id"].get<JobId>());
  EXPECT_EQ(got, by_user_queue["alice/strict"]);
  EXPECT_EQ(History(h, {{"user", "bob"}, {"state", "DONE"}})["jobs"].size(), 0u);
  EXPECT_EQ(Reply(h.c().History({{"state", "RUNNING"}})).status, 400);
  EXPECT_EQ(Reply(h.c().History({{"cursor", "nonsense"}})).status, 400);
  EXPECT_EQ(Reply(h.c().History({{"limit", "0"}})).status, 400);
  const int64_t later = h.now_ms() / 1000 + 1;
  EXPECT_EQ(History(h, {{"since", std::to_string(later)}})["jobs"].size(), 0u);
  EXPECT_EQ(History(h, {{"until", std::to_string(later)}})["jobs"].size(), 23u);

  std::vector<JobId> paged;
  std::map<std::string, std::string> params = {{"limit", "4"}};
  for (int pages = 0; pages < 20; ++pages) {
    const json page = History(h, params);
    for (const json& row : page["jobs"]) paged.push_back(row["id"].get<JobId>());
    if (page["next_cursor"].is_null()) break;
    params["cursor"] = page["next_cursor"].get<std::string>();
  }
  EXPECT_EQ(paged.size(), 23u);
  EXPECT_EQ(std::set<JobId>(paged.begin(), paged.end()).size(), 23u);
}

TEST(HistoryTest, TheKeeperDeletesRowsPastKeepHistoryDaysOnly) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const JobId old_job = h.Submit("alice", {{"command", "x"}, {"hold", true}});
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, old_job)).status, 200);
  h.Advance(10LL * 86'400'000);
  const JobId recent = h.Submit("alice", {{"command", "y"}, {"hold", true}});
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, recent)).status, 200);
  const JobId waiting = h.Submit("alice", {{"command", "z"}, {"hold", true}});
  h.c().FlushStore();
  const int64_t now_ms = h.now_ms();
  // Through the controller's own store: one chunk of one row at a time.
  HistoryKeeper own(
      &h.store(), {.keep_seconds = 5 * 86'400, .chunk = 1}, [now_ms] { return now_ms; },
      spdlog::default_logger());
  EXPECT_EQ(own.PurgeOnce(), 1);
  const json page = History(h);
  ASSERT_EQ(page["jobs"].size(), 1u);
  EXPECT_EQ(page["jobs"][0]["id"], recent);
  EXPECT_EQ(h.State(waiting), "HELD");
}

// One retention, one mechanism per store: with SQLite (which purges itself) the
// controller's cycles queue no deletes of their own (PurgeHistoryLocked is etcd's), and the
// keeper's pass is what deletes the row (--keep-history-days, default 30 days).
TEST(HistoryTest, WithSqliteOnlyTheKeeperDeletesHistory) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_TRUE(h.store().PurgesHistory());
  const JobId job = h.Submit("alice", {{"command", "x"}, {"hold", true}});
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, job)).status, 200);
  h.Advance(31LL * 86'400'000);
  for (int i = 0; i < 3; ++i) {
    h.Cycle();
    h.Advance(60'000);
  }
  h.c().FlushStore();
  EXPECT_EQ(History(h)["jobs"].size(), 1u);
  h.c().PurgeHistoryNow();
  EXPECT_TRUE(History(h)["jobs"].empty());
}

TEST(HistoryTest, CursorRoundTripsAndRejectsGarbage) {
  auto decoded = wire::DecodeHistoryCursor(wire::EncodeHistoryCursor(1700000000, 42));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->first, 1700000000);
  EXPECT_EQ(decoded->second, 42);
  for (const char* bad : {"", ".", "1.", ".2", "1.2.3", "a.b", "1 .2"}) {
    EXPECT_FALSE(wire::DecodeHistoryCursor(bad)) << bad;
  }
}

// Every run stays (issue 47.6): a job requeued while it ran has two history rows — the
// earlier run REQUEUED, with its hosts and times, and the last — whose waits start at the
// submission and at the requeue; GET /v1/history/ID gives both and the timeline, from memory
// and, once the controller forgot the job, from the store.
TEST(HistoryTest, ARequeuedJobKeepsItsEarlierRunAndItsTimeline) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId id = h.Submit("alice", {{"command", "a"}, {"tasks", 2}});
  h.Advance(3'000);
  h.Cycle();
  ASSERT_EQ(LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{id});
  h.Heartbeat("h1", {id});
  h.Advance(10'000);
  ASSERT_EQ(Reply(h.c().Requeue(Caller{.user = "alice"}, id)).status, 200);
  h.Heartbeat("h1", json::array(), Exited(id, 0, "killed"));  // its kill, reported
  ASSERT_EQ(h.State(id), "PENDING");
  const json pending = h.Job(id);
  EXPECT_EQ(pending["requeues"], 1) << pending.dump();
  h.Advance(4'000);
  RunToExit(h, id, 0);

  const auto check = [&](const std::string& when) {
    const json page = History(h, {{"id", std::to_string(id)}});
    ASSERT_EQ(page["jobs"].size(), 2u) << when << page.dump();
    const json& last = page["jobs"][0];  // newest end first
    const json& first = page["jobs"][1];
    EXPECT_EQ(last["state"], "DONE") << when;
    EXPECT_EQ(last["run"], 2) << when;
    EXPECT_EQ(last["wait_seconds"], 4) << when << last.dump();  // since the requeue
    EXPECT_EQ(first["state"], "REQUEUED") << when;
    EXPECT_EQ(first["run"], 1) << when;
    EXPECT_EQ(first["cause"], "by alice") << when;
    EXPECT_EQ(first["wait_seconds"], 3) << when << first.dump();
    EXPECT_EQ(first["run_seconds"], 10) << when << first.dump();
    EXPECT_EQ(first["hosts"], json::parse(R"([{"host": "h1", "slots": 2}])")) << when;
    const Reply one(h.c().JobHistory(id));
    ASSERT_EQ(one.status, 200) << when;
    EXPECT_EQ(one.Json()["runs"].size(), 2u) << when;
    const json body = one.Json();
    std::vector<std::string> events;
    for (const json& e : body["timeline"]) events.push_back(e["event"]);
    EXPECT_EQ(events, (std::vector<std::string>{"submit", "start", "requeue", "start", "end"}))
        << when << body.dump();
    // The summary counts one job with both runs' slot time.
    const json summary = Reply(h.c().HistorySummary({{"user", "alice"}})).Json();
    EXPECT_EQ(summary["total"]["jobs"], 1) << when;
    EXPECT_NEAR(summary["total"]["slot_hours"].get<double>(), 2.0 * (10 + 5) / 3600,
                1e-9)
        << when;
  };
  check("in memory");
  h.Advance(2 * 3'600'000);  // past the in-memory retention, then a restart
  h.Cycle();
  h.Close();
  h.Open();
  EXPECT_EQ(Reply(h.c().GetJob(id)).status, 404);
  check("from the store");
  EXPECT_EQ(Reply(h.c().JobHistory(id + 100)).status, 404);
  EXPECT_EQ(Reply(h.c().History({{"id", "x"}})).status, 400);
}

// Issue 47.5: an array's own row is not a job in the history (its elements are), and an
// element's row names it by its array's id and its index.
TEST(HistoryTest, ElementsAreJobsOfTheHistoryTheirArrayIsNot) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId array = h.Submit("alice", {{"command", "a"}, {"array", "1-2"}});
  ASSERT_EQ(h.Register("h2").status, 200);
  h.Cycle();
  size_t ran = 0;
  for (const char* host : {"h1", "h2"}) {
    const std::vector<JobId> launched = LaunchedIds(h.Heartbeat(host));
    h.Heartbeat(host, json(launched));
    json exited = json::array();
    for (JobId id : launched) exited.push_back(Exited(id, 0)[0]);
    h.Heartbeat(host, json::array(), exited);
    ran += launched.size();
  }
  ASSERT_EQ(ran, 2u) << h.log();
  h.Cycle();
  const json page = History(h);
  // The elements are the history's jobs, each ID and index; the array's own row (DONE, its
  // elements done) is not listed.
  ASSERT_EQ(page["jobs"].size(), 2u) << page.dump();
  int64_t elements = 0;
  for (const json& row : page["jobs"]) {
    EXPECT_TRUE(row.contains("index")) << row.dump();
    EXPECT_EQ(row["id"], array) << row.dump();
    ++elements;
  }
  EXPECT_EQ(Reply(h.c().HistorySummary({})).Json()["total"]["jobs"], elements);
  const Reply own(h.c().JobHistory(array));  // still there, asked for by its id
  ASSERT_EQ(own.status, 200);
  EXPECT_EQ(own.Json()["runs"][0]["state"], "DONE");
}

}  // namespace
}  // namespace sluice::server
