// The job counts behind /metrics' sluice_jobs and sluice_pending_reasons (JobBook::counts):
// kept as jobs change, they equal a walk over every job after any sequence of transitions,
// across a restart too; an array's own record is not a job, its elements are.
#include <gtest/gtest.h>

#include <random>
#include <regex>

#include "base/array_ids.h"
#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;
using testing::Exited;

// sluice_jobs{state=STATE,queue=QUEUE} from the exposition text.
int64_t JobsGauge(const std::string& metrics, const std::string& state, const std::string& queue) {
  const std::regex line("sluice_jobs\\{state=\"" + state + "\",queue=\"" + queue + "\"\\} (\\d+)");
  std::smatch m;
  return std::regex_search(metrics, m, line) ? std::stoll(m[1]) : -1;
}

void ExpectKeptEqualsWalk(ControllerHarness& h, const std::string& step) {
  auto [kept, walked] = h.c().JobCountsKeptAndWalked();
  ASSERT_EQ(kept.by_state, walked.by_state) << step;
  ASSERT_EQ(kept.by_reason, walked.by_reason) << step;
  ASSERT_EQ(kept.by_user, walked.by_user) << step;
}

// Random submissions (plain, held, other queues, arrays), cycles, heartbeats that confirm and
// end jobs, cancels, holds, releases, requeues, retention and a restart: after every step the
// kept counts are the walk's.
TEST(JobCountsTest, KeptCountsEqualAFullWalkAfterRandomTransitions) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  std::mt19937 rng(7);
  std::vector<JobId> ids;
  const Caller alice{.user = "alice"};
  const Caller root{.user = "root", .admin = true};
  auto pick = [&]() { return ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng)]; };
  for (int step = 0; step < 400; ++step) {
    const int what = std::uniform_int_distribution<int>(0, 9)(rng);
    std::string name = "step " + std::to_string(step) + " action " + std::to_string(what);
    if (what <= 2 || ids.empty()) {
      const char* queues[] = {"normal", "bf", "strict"};
      json body = {{"command", "x"}, {"queue", queues[step % 3]}, {"tasks", 1 + step % 3}};
      if (step % 7 == 0) body["hold"] = true;
      if (step % 11 == 0) body["array"] = "1-4";
      const JobId id = h.Submit("alice", body);
      if (id > 0) ids.push_back(id);
    } else if (what == 3) {
      h.Cycle();
    } else if (what == 4) {  // each host says what it was launched, then ends one of them
      for (const char* host : {"h1", "h2"}) {
        json launched = json::array();
        for (const json& l : h.Heartbeat(host)["launch"]) launched.push_back(l["job"]);
        if (launched.empty()) continue;
        h.Heartbeat(host, launched);
        h.Heartbeat(host, json::array(), Exited(launched[0].get<JobId>(), step % 2));
      }
    } else if (what == 5) {
      (void)(void)h.c().Cancel(alice, pick());
    } else if (what == 6) {
      (void)(void)h.c().Hold(alice, pick(), step % 2 == 0);
    } else if (what == 7) {
      (void)(void)h.c().Requeue(root, pick());
    } else if (what == 8) {
      (void)(void)h.c().Modify(alice, pick(), {{"queue", "bf"}});
    } else {
      h.Advance(std::uniform_int_distribution<int>(1, 4000)(rng) * 1000);  // retention, leases
      h.Cycle();
    }
    ExpectKeptEqualsWalk(h, name);
    if (step == 250) {
      h.Close();
      h.Open();
      ASSERT_EQ(h.Register("h1").status, 200);
      ASSERT_EQ(h.Register("h2").status, 200);
      ExpectKeptEqualsWalk(h, "after the restart");
    }
  }
}

// An array of 3 and one plain job are 4 pending jobs, not 5 (the array's own record is not
// a job), before and after a cycle starts some elements.
TEST(JobCountsTest, AnArraysOwnRecordIsNotCounted) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const JobId array = h.Submit("alice", {{"command", "x"}, {"array", "1-3"}});
  h.Submit("alice", {{"command", "y"}});
  std::string metrics = h.c().Metrics();
  EXPECT_EQ(JobsGauge(metrics, "PENDING", "normal"), 4) << metrics;
  ExpectKeptEqualsWalk(h, "submitted");
  ASSERT_EQ(h.Register("h1").status, 200);
  h.Cycle();
  metrics = h.c().Metrics();
  const int64_t pending = JobsGauge(metrics, "PENDING", "normal");
  const int64_t admitting = JobsGauge(metrics, "ADMITTING", "normal");
  EXPECT_EQ(pending + admitting, 4) << metrics;
  EXPECT_GT(admitting, 0) << metrics;
  EXPECT_EQ(h.State(ArrayElementId(array, 1)), "ADMITTING");
  ExpectKeptEqualsWalk(h, "started");
}

}  // namespace
}  // namespace sluice::server
