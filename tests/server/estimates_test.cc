// Estimated starts from the controller (R-UX-8): on a small cluster with known run limits,
// the estimate of each queued job equals the start the simulator computes for the same
// state, and when every job runs to its limit each job starts no later than its estimate.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "server/controller.h"
#include "server/http_reply.h"
#include "server/controller_fixture.h"
#include "server/job_spec.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::LaunchedIds;
using testing::TestCluster;

struct Shape {
  int tasks;
  int64_t run_limit;
};
// The first fills the cluster; the others wait, some backfill (queue normal is fifo, so none
// does: each starts when the ones before it leave room).
const std::vector<Shape> kShapes = {{8, 100}, {4, 50}, {4, 30}, {8, 20}, {2, 40}, {6, 10}};

std::map<JobId, Instant> SimulatorStarts(Instant t0) {
  Result<core::ClusterState> state = core::ClusterState::Create(TestCluster());
  EXPECT_TRUE(state);
  sim::Workload workload;
  JobId id = 1;
  for (const Shape& s : kShapes) {
    sim::WorkloadJob job;
    job.spec = core::JobSpec{.id = id++,
                             .user = "alice",
                             .min_tasks = s.tasks,
                             .max_tasks = s.tasks,
                             .run_limit = s.run_limit,
                             .submit_time = t0};
    job.runtime = s.run_limit;
    workload.jobs.push_back(job);
  }
  sim::Simulator simulator(std::move(*state), workload, sim::SimOptions{});
  Result<sim::SimResult> result = simulator.Run(nullptr);
  EXPECT_TRUE(result);
  std::map<JobId, Instant> starts;
  for (const sim::JobRecord& r : result->records) starts[r.id] = r.start;
  return starts;
}

TEST(EstimatesTest, EstimatesEqualTheSimulatorsStartsAndJobsStartNoLater) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  const Instant t0 = h.now_ms() / 1000;
  std::vector<JobId> ids;
  for (const Shape& s : kShapes) {
    ids.push_back(
        h.Submit("alice", {{"command", "x"}, {"tasks", s.tasks}, {"run_limit", s.run_limit}}));
  }
  // Before any refresh: unknown, "not estimated yet".
  EXPECT_TRUE(h.Job(ids[1])["estimated_start"].is_null());
  EXPECT_EQ(h.Job(ids[1])["unknown_because"], "not estimated yet");
  h.Cycle();
  const RefreshStats stats = h.c().RefreshEstimates();
  EXPECT_EQ(stats.estimated, static_cast<int64_t>(kShapes.size()) - 1);
  const std::map<JobId, Instant> simulated = SimulatorStarts(t0);
  std::map<JobId, Instant> estimate;
  for (size_t i = 1; i < ids.size(); ++i) {
    const json job = h.Job(ids[i]);
    ASSERT_TRUE(job["estimated_start"].is_number_integer()) << job.dump();
    estimate[ids[i]] = job["estimated_start"].get<Instant>();
    EXPECT_EQ(estimate[ids[i]], simulated.at(ids[i])) << "job " << ids[i];
  }
  EXPECT_FALSE(h.Job(ids[0]).contains("estimated_start"));  // running: no estimate
  // The listing carries the same members.
  for (const json& job : Reply(h.c().ListJobs({{"fields", "id,estimated_start"}})).Json()) {
    if (job["id"] == ids[1]) {
      EXPECT_EQ(job["estimated_start"], estimate[ids[1]]);
    }
  }

  // Every job runs to its limit: launches confirmed at once, exits at start + limit.
  std::map<std::string, std::set<JobId>> running;
  std::map<JobId, Instant> started;
  for (int second = 0; second <= 400 && started.size() < ids.size(); ++second) {
    for (const std::string host : {"h1", "h2"}) {
      json exited = json::array();
      for (JobId id : running[host]) {
        if (h.now_ms() / 1000 >= started[id] + kShapes[id - 1].run_limit) {
          exited.push_back({{"job", id}, {"exit_code", 0}, {"signal", nullptr}, {"cause", "exit"}});
        }
      }
      for (const json& e : exited) running[host].erase(e["job"].get<JobId>());
      for (JobId id : LaunchedIds(h.Heartbeat(host, json(running[host]), exited))) {
        running[host].insert(id);
        started[id] = h.Job(id)["start_time"].get<Instant>();
      }
    }
    h.Cycle();
    for (const std::string host : {"h1", "h2"}) {
      for (JobId id : LaunchedIds(h.Heartbeat(host, json(running[host])))) {
        running[host].insert(id);
        started[id] = h.Job(id)["start_time"].get<Instant>();
      }
    }
    h.Advance(1000);
  }
  ASSERT_EQ(started.size(), ids.size());
  for (const auto& [id, at] : estimate) EXPECT_LE(started[id], at) << "job " << id;
}

TEST(EstimatesTest, AHeldJobIsUnknownWithWhy) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId held = h.Submit("alice", {{"command", "x"}, {"hold", true}});
  h.Cycle();
  h.c().RefreshEstimates();
  const json job = h.Job(held);
  EXPECT_TRUE(job["estimated_start"].is_null());
  EXPECT_EQ(job["unknown_because"], "it is held");
}

// Issue 45: the forecast covers the first estimate_jobs_per_queue waiting jobs of each queue;
// the others say so instead of carrying an estimate, in the job's object and in listings.
TEST(EstimatesTest, JobsBeyondTheForecastsCoverSaySo) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.set_estimate_jobs_per_queue(2);
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  std::vector<JobId> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(h.Submit("alice", {{"command", "x"}, {"tasks", 8}, {"run_limit", 100}}));
  h.Cycle();
  EXPECT_EQ(h.c().RefreshEstimates().estimated, 2);  // the first runs; ids[1], ids[2] covered
  EXPECT_EQ(h.Job(ids[1])["estimated_start"], h.now_ms() / 1000 + 100);
  EXPECT_EQ(h.Job(ids[2])["estimated_start"], h.now_ms() / 1000 + 200);
  const std::string beyond =
      "not in the last forecast, which covered the first 2 waiting jobs of each queue";
  for (JobId id : {ids[3], ids[4]}) {
    EXPECT_TRUE(h.Job(id)["estimated_start"].is_null());
    EXPECT_EQ(h.Job(id)["unknown_because"], beyond) << "job " << id;
  }
  int listed = 0;
  for (const json& job :
       Reply(h.c().ListJobs({{"fields", "id,estimated_start"}})).Json()) {
    if (job["id"] == ids[4]) {
      EXPECT_EQ(job["unknown_because"], beyond);
      ++listed;
    }
  }
  EXPECT_EQ(listed, 1);
  // A job that begins waiting after that forecast's copy was not left out by it.
  const JobId later = h.Submit("alice", {{"command", "x"}, {"tasks", 8}, {"run_limit", 100}});
  EXPECT_EQ(h.Job(later)["unknown_because"], "not estimated yet");
  h.Cycle();
  EXPECT_EQ(h.c().RefreshEstimates().estimated, 2);
  EXPECT_EQ(h.Job(later)["unknown_because"], beyond);
  // Once the queue is short enough again, the forecast covers every job.
  for (JobId id : {ids[1], ids[2], later})
    ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, id)).status, 200);
  h.Cycle();
  EXPECT_EQ(h.c().RefreshEstimates().estimated, 2);
  EXPECT_EQ(h.Job(ids[4])["estimated_start"], h.now_ms() / 1000 + 200);
}

}  // namespace
}  // namespace sluice::server
