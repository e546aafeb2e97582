// Estimated start times (issue 6): the core run forward from the state at T. With run limits
// equal to runtimes and no arrivals after T, the estimate is exactly the simulated start.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <variant>

#include "base/array_ids.h"
#include "core/cycle/scheduler.h"
#include "core/driver/forecast.h"
#include "sim/simulator.h"
#include "testing/builders.h"
#include "wire/estimate_json.h"

namespace sluice::sim {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;

struct AtT {
  std::map<JobId, core::StartEstimate> estimates;
  std::map<JobId, Instant> true_start;  // the first start; absent: never started
  bool preempted_by_t = false;          // the truth preempted a job at or before T
};

// The first start of every job after T (a preempted job starts again later; the jobs
// pending at T start after T).
class FirstStarts final : public DecisionSink {
 public:
  FirstStarts(AtT& at, Instant after)
      : starts_(at.true_start), preempted_(at.preempted_by_t), after_(after) {}
  void OnStart(Instant t, const core::Job& job, const core::ClusterState&) override {
    if (t > after_) starts_.try_emplace(job.spec.id, t);
  }
  void OnFinish(Instant, const core::Job&) override {}
  void OnExit(Instant, JobId, core::ExitCause, const std::string&) override {}
  void OnCancel(Instant, JobId) override {}
  void OnPreempt(Instant t, JobId, JobId) override { preempted_ = preempted_ || t <= after_; }

 private:
  std::map<JobId, Instant>& starts_;
  bool& preempted_;
  Instant after_;
};

// Runs `workload` to T, estimates, then runs it to the end for the truth.
AtT EstimateAndSimulate(const core::ClusterConfig& config, const Workload& workload, Instant t) {
  AtT out;
  std::optional<Instant> wake;
  SimOptions options{.pending_at = t};
  options.after_cycle = [&wake](const core::ClusterState&, Instant now,
                                const core::CycleResult& cycle) {
    if (wake && *wake <= now) wake.reset();
    if (cycle.wake_at && *cycle.wake_at > now)
      wake = std::min(wake.value_or(kInfinite), *cycle.wake_at);
  };
  Result<core::ClusterState> state = core::ClusterState::Create(config);
  SLUICE_CHECK(state.has_value());
  Simulator to_t(std::move(*state), workload, std::move(options));
  Result<SimResult> partial = to_t.Run(nullptr);
  SLUICE_CHECK(partial.has_value());
  out.estimates = core::EstimateStarts(to_t.state(), partial->pending_time, wake);

  Result<core::ClusterState> fresh = core::ClusterState::Create(config);
  SLUICE_CHECK(fresh.has_value());
  Simulator full(std::move(*fresh), workload, SimOptions{});
  FirstStarts sink(out, t);
  Result<SimResult> result = full.Run(&sink);
  SLUICE_CHECK(result.has_value());
  return out;
}

WorkloadJob Job(JobId id, Instant submit, int32_t tasks, Duration runtime, bool limit = true) {
  WorkloadJob job;
  job.spec = JobBuilder(id).Tasks(tasks).Submit(submit);
  if (limit) job.spec.run_limit = runtime;
  job.runtime = runtime;
  return job;
}

TEST(ClusterStateCloneTest, CloneIsIndependentAndDecidesTheSame) {
  core::ClusterState state =
      ClusterBuilder().Hosts(2, 2).Policy(core::PolicyKind::kEasyBackfill).State();
  testing::SubmitRunning(state, JobBuilder(1).Tasks(3).Limit(100).ResReq("span[ptile=2]").Build(),
                         0);
  testing::Submit(state, JobBuilder(2).Tasks(2).Limit(50));
  testing::Submit(state, JobBuilder(3).Tasks(1).Limit(50).ResReq("span[hosts=1]"));
  core::ClusterState clone = state.Clone();
  const core::Scheduler scheduler;
  core::CycleResult a = scheduler.RunCycle(state, 10, {.explain = true});
  core::CycleResult b = scheduler.RunCycle(clone, 10, {.explain = true});
  ASSERT_EQ(a.decisions.size(), b.decisions.size());
  for (size_t i = 0; i < a.decisions.size(); ++i)
    EXPECT_EQ(a.decisions[i].index(), b.decisions[i].index());
  EXPECT_EQ(testing::ReasonsOf(a, 2), testing::ReasonsOf(b, 2));
  // Committing on the clone leaves the original alone, and the clone's jobs are its own.
  core::Commit(b, 10, clone);
  EXPECT_EQ(clone.FindJob(3)->state, core::JobState::kRunning);
  EXPECT_EQ(state.FindJob(3)->state, core::JobState::kPending);
  EXPECT_EQ(state.topology().queues()[0].pending.size(), 2u);
  EXPECT_NE(clone.FindJob(1)->request, state.FindJob(1)->request);
  EXPECT_EQ(*clone.FindJob(1)->request, *state.FindJob(1)->request);
  for (const core::RunningEntry& entry : clone.running())
    EXPECT_EQ(entry.job, clone.FindJob(entry.job->spec.id));
  EXPECT_TRUE(core::Apply(core::JobFinished{1, 0, core::ExitCause::kNone}, 20, clone).ok());
  EXPECT_EQ(state.FindJob(1)->state, core::JobState::kRunning);
  EXPECT_EQ(state.topology().hosts()[0].used_slots + state.topology().hosts()[1].used_slots, 3);
}

// Issue 45: the controller's forecast copies only the first waiting jobs of each queue. Kept
// besides them: running jobs, the ended jobs a kept job's dependency names, and an array's
// pending element Jobs wherever they stand (the array's record checks they exist).
TEST(ClusterStateCloneTest, CloneFirstWaitingKeepsTheHeadsAndWhatTheyNeed) {
  core::ClusterState state = ClusterBuilder()
                                 .Hosts(2, 1)
                                 .Queue("a", core::PolicyKind::kFifo, 10)
                                 .Queue("b", core::PolicyKind::kFifo, 5)
                                 .State();
  testing::SubmitRunning(state, JobBuilder(1).Queue("a").Limit(10).Build(), 0);
  ASSERT_TRUE(core::Apply(core::JobFinished{.job = 1, .exit_code = 0}, 5, state).ok());
  testing::SubmitRunning(state, JobBuilder(2).Queue("a").Limit(100).Build(), 5);
  testing::SubmitRunning(state, JobBuilder(3).Queue("b").Limit(100).Build(), 5);
  for (JobId id = 10; id < 20; ++id) testing::Submit(state, JobBuilder(id).Queue("a").Submit(6));
  testing::Submit(state, JobBuilder(20).Queue("a").Depend("done(1) && done(2)").Priority(50).Submit(6));
  // Names job 19, which the copy leaves out of queue a.
  testing::Submit(state,
                  JobBuilder(21).Queue("a").Depend("done(2) && started(19)").Priority(40).Submit(6));
  for (JobId id = 30; id < 35; ++id) testing::Submit(state, JobBuilder(id).Queue("b").Submit(6));
  ASSERT_TRUE(core::Apply(core::JobSubmitted{JobBuilder(40).Queue("b").Submit(6), "1-4%2"}, 6, state)
                  .ok());
  core::Commit(testing::ExplainedCycle(state, 6), 6, state);
  std::vector<JobId> elements;
  for (int32_t index = 1; index <= 4; ++index) {
    const core::Job* element = state.FindJob(ArrayElementId(40, index));
    if (element != nullptr && element->state == core::JobState::kPending)
      elements.push_back(element->spec.id);
  }
  ASSERT_FALSE(elements.empty());  // the array's first element is a pending Job

  core::ClusterState copy = state.CloneFirstWaiting(2);
  auto waiting = [](const core::ClusterState& s, size_t q) {
    std::vector<JobId> ids;
    for (const core::PendingEntry& entry : s.topology().queues()[q].pending)
      ids.push_back(entry.job->spec.id);
    return ids;
  };
  // Queue a: jobs 20 and 21 first (their priorities); queue b: 30, 31, then the element(s).
  EXPECT_EQ(waiting(copy, 0), (std::vector<JobId>{20, 21}));
  std::vector<JobId> b{30, 31};
  b.insert(b.end(), elements.begin(), elements.end());
  EXPECT_EQ(waiting(copy, 1), b);
  EXPECT_EQ(copy.FindJob(10), nullptr);
  EXPECT_EQ(copy.FindJob(32), nullptr);
  ASSERT_NE(copy.FindJob(1), nullptr);  // ended, named by job 20's dependency
  EXPECT_EQ(copy.FindJob(1)->state, core::JobState::kDone);
  ASSERT_NE(copy.FindJob(19), nullptr);  // waiting, named by job 21's, outside the queues
  EXPECT_EQ(copy.FindJob(19)->state, core::JobState::kPending);
  EXPECT_EQ(copy.running().size(), 2u);
  for (const core::RunningEntry& entry : copy.running())
    EXPECT_EQ(entry.job, copy.FindJob(entry.job->spec.id));
  EXPECT_EQ(state.topology().queues()[0].pending.size(), 12u);  // the original keeps them all

  // The copy runs forward: job 2 ends, so job 20's dependency holds and it starts; job 21's
  // still waits for job 19 (read as it is, not as a job that does not exist); the other slot
  // goes to queue b; the array's cap and refills find their element Jobs.
  ASSERT_TRUE(core::Apply(core::JobFinished{.job = 2, .exit_code = 0}, 105, copy).ok());
  ASSERT_TRUE(core::Apply(core::JobFinished{.job = 3, .exit_code = 0}, 105, copy).ok());
  testing::CycleAndCommit(copy, 105);
  EXPECT_EQ(copy.FindJob(20)->state, core::JobState::kRunning);
  EXPECT_EQ(copy.FindJob(21)->state, core::JobState::kPending);
  const core::DependEvaluation* waits = copy.dependencies().Of(21);
  ASSERT_NE(waits, nullptr);
  EXPECT_EQ(waits->verdict, core::DependVerdict::kWaiting);
  EXPECT_EQ(copy.FindJob(30)->state, core::JobState::kRunning);
  EXPECT_EQ(copy.FindJob(19)->state, core::JobState::kPending);
}

// With a FIFO queue, nothing behind a job can change when it starts: the forecast of the
// first jobs on the trimmed copy gives the full forecast's estimates for them.
TEST(EstimateTest, TheFirstWaitingJobsEstimateAsOnTheWholeState) {
  core::ClusterState state = ClusterBuilder().Hosts(3, 2).State();
  for (JobId id = 1; id <= 3; ++id)
    testing::SubmitRunning(state, JobBuilder(id).Tasks(2).Limit(50 * id).Build(), 0);
  for (JobId id = 10; id < 60; ++id)
    testing::Submit(state, JobBuilder(id).Tasks(1 + id % 4).Limit(10 + id % 7).Submit(1));
  const auto whole = core::EstimateStarts(state, 1, std::nullopt, {.cycle_at_now = true});
  const auto first = core::EstimateStartsOn(state.CloneFirstWaiting(20), 1, std::nullopt,
                                            {.cycle_at_now = true});
  ASSERT_EQ(whole.size(), 50u);
  ASSERT_EQ(first.size(), 20u);
  for (const auto& [id, estimate] : first) {
    ASSERT_TRUE(whole.contains(id)) << id;
    EXPECT_LT(id, 30) << "only the first 20 waiting jobs are estimated";
    EXPECT_EQ(estimate.start, whole.at(id).start) << "job " << id;
  }
}

TEST(EstimateTest, FifoQueueStartsWhenLimitsEnd) {
  Workload workload;
  workload.jobs = {Job(1, 0, 2, 100), Job(2, 0, 2, 30), Job(3, 5, 4, 10), Job(4, 5, 1, 10)};
  AtT at = EstimateAndSimulate(ClusterBuilder().Hosts(2, 2).Config(), workload, 5);
  ASSERT_EQ(at.estimates.size(), 2u);
  EXPECT_EQ(at.estimates[3].start, 100);
  EXPECT_EQ(at.estimates[4].start, 110);
  EXPECT_EQ(at.true_start[3], 100);
  EXPECT_EQ(at.true_start[4], 110);
}

// Every pending job's estimate names the running jobs without a run limit it waits for; the
// list is capped (kWaitsForListed) and the count kept, or 40,000 pending jobs behind 160,000
// such jobs held 6.4e9 ids (issue 21).
TEST(EstimateTest, TheJobsWithoutRunLimitAreListedUpToACapAndCounted) {
  Workload workload;
  for (JobId id = 1; id <= 30; ++id) workload.jobs.push_back(Job(id, 0, 1, 100, /*limit=*/false));
  workload.jobs.push_back(Job(31, 1, 1, 10));
  AtT at = EstimateAndSimulate(ClusterBuilder().Hosts(30, 1).Config(), workload, 1);
  ASSERT_EQ(at.estimates.size(), 1u);
  const core::StartEstimate& blocked = at.estimates[31];
  EXPECT_FALSE(blocked.start.has_value());
  ASSERT_EQ(blocked.waits_for.size(), core::kWaitsForListed);
  EXPECT_EQ(blocked.waits_for.front(), 1);
  EXPECT_EQ(blocked.waits_for_count, 30);
  EXPECT_EQ(wire::EstimateText(blocked),
            "unknown (it waits for jobs without a run limit: 1, 2, 3, 4, 5 and 25 more)");
  nlohmann::ordered_json json;
  wire::AddEstimateJson(blocked, json);
  EXPECT_EQ(json["waits_for"].size(), core::kWaitsForListed);
  EXPECT_EQ(json["waits_for_count"], 30);
}

TEST(EstimateTest, UnknownBehindAJobWithoutRunLimit) {
  Workload workload;
  workload.jobs = {Job(1, 0, 2, 100, /*limit=*/false), Job(2, 0, 1, 30), Job(3, 1, 3, 10),
                   Job(4, 1, 1, 5)};
  workload.jobs[3].spec.hold = true;
  AtT at = EstimateAndSimulate(ClusterBuilder().Hosts(1, 3).Config(), workload, 1);
  ASSERT_EQ(at.estimates.size(), 2u);
  const core::StartEstimate& blocked = at.estimates[3];
  EXPECT_FALSE(blocked.start.has_value());
  EXPECT_EQ(blocked.waits_for, (std::vector<JobId>{1}));
  EXPECT_EQ(blocked.reason_at_end, core::ReasonCode::kNoResource);
  EXPECT_EQ(wire::EstimateText(blocked), "unknown (it waits for jobs without a run limit: 1)");
  const core::StartEstimate& held = at.estimates[4];
  EXPECT_FALSE(held.start.has_value());
  EXPECT_EQ(held.reason_at_end, core::ReasonCode::kHeld);
  EXPECT_TRUE(held.waits_for.empty());
  EXPECT_EQ(wire::EstimateText(held), "unknown (it is held)");
}

TEST(EstimateTest, AJobWithoutRunLimitThatDoesNotBlockLeavesTheEstimateKnown) {
  Workload workload;
  workload.jobs = {Job(1, 0, 1, 100, /*limit=*/false), Job(2, 0, 2, 30), Job(3, 1, 2, 10)};
  AtT at = EstimateAndSimulate(ClusterBuilder().Hosts(1, 3).Config(), workload, 1);
  EXPECT_EQ(at.estimates[3].start, 30);
  EXPECT_EQ(at.true_start[3], 30);
  nlohmann::ordered_json j;
  wire::AddEstimateJson(at.estimates[3], j);
  EXPECT_EQ(j.dump(), R"({"estimated_start":30})");
}

TEST(EstimateTest, OverrunJobsAreExpectedToEndNow) {
  core::ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  testing::SubmitRunning(state, JobBuilder(1).Tasks(2).Limit(10), 0);
  testing::Submit(state, JobBuilder(2).Tasks(1).Limit(10).Submit(1));
  std::map<JobId, core::StartEstimate> estimates = core::EstimateStarts(state, 50, std::nullopt);
  EXPECT_EQ(estimates[2].start, 50);
}

// Random small workloads, every policy: run limits equal runtimes and nothing arrives after
// T, so the estimate must be the true start (R-SIM-1b timing on both sides).
core::ClusterConfig RandomCluster(std::mt19937_64& rng, core::PolicyKind policy) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % (hi - lo + 1));
  };
  ClusterBuilder builder;
  const int hosts = static_cast<int>(uniform(1, 5));
  for (int h = 0; h < hosts; ++h) {
    core::HostSpec host{.name = "h" + std::to_string(h),
                        .slots = static_cast<int32_t>(uniform(1, 4))};
    host.resources["mem"] = uniform(1, 4) * 1000;
    builder.Host(host);
  }
  builder.Shared("lic", uniform(1, 3));
  core::QueueSpec normal{.name = "normal", .policy = policy};
  normal.max_bypass = static_cast<int32_t>(uniform(0, 3));
  normal.max_head_wait = uniform(0, 100);
  core::QueueSpec other = normal;
  other.name = "other";
  other.priority = 1;
  if (uniform(0, 1) == 0) {  // priority preemption: victims requeue, the forecast must follow
    normal.preemptable = true;
    other.preemptive = true;
  }
  builder.Queue(normal);
  builder.Queue(other);
  return builder.Config();
}

Workload RandomWorkload(std::mt19937_64& rng, int32_t max_tasks) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % (hi - lo + 1));
  };
  const char* requests[] = {
      "", "", "rusage[mem=700]", "span[hosts=1]", "rusage[lic=1]", "span[ptile=2]"};
  Workload workload;
  const int jobs = static_cast<int>(uniform(1, 25));
  for (int i = 0; i < jobs; ++i) {
    WorkloadJob job = Job(i + 1, uniform(0, 40), static_cast<int32_t>(uniform(1, max_tasks)),
                          uniform(0, 6) == 0 ? 0 : uniform(1, 120));
    job.spec.resreq = requests[uniform(0, 5)];
    job.spec.queue = uniform(0, 3) == 0 ? "other" : "normal";
    if (uniform(0, 8) == 0) job.spec.begin_time = uniform(0, 200);
    if (uniform(0, 8) == 0) job.spec.exclusive = true;
    job.spec.priority = static_cast<int32_t>(uniform(0, 1));
    workload.jobs.push_back(std::move(job));
  }
  std::stable_sort(workload.jobs.begin(), workload.jobs.end(),
                   [](const WorkloadJob& a, const WorkloadJob& b) {
                     return a.spec.submit_time < b.spec.submit_time;
                   });
  return workload;
}

TEST(EstimateTest, EqualsTheSimulatedStartWhenLimitsAreRuntimes) {
  int64_t compared = 0;
  for (core::PolicyKind policy : {core::PolicyKind::kFifo, core::PolicyKind::kEasyBackfill,
                                  core::PolicyKind::kBoundedBackfill}) {
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      SCOPED_TRACE("policy " + std::string(core::ToString(policy)) + " seed " +
                   std::to_string(seed));
      std::mt19937_64 rng(seed);
      core::ClusterConfig config = RandomCluster(rng, policy);
      int32_t total = 0;
      for (const core::HostSpec& host : config.hosts) total += host.slots;
      Workload workload = RandomWorkload(rng, total);
      const Instant t = workload.jobs.back().spec.submit_time;  // no arrival after T
      AtT at = EstimateAndSimulate(config, workload, t);
      // NOTE: the simulator still runs a cycle at the original finish time of a job preempted
      // before T; the state at T does not remember that time, so such runs are not compared.
      if (at.preempted_by_t) continue;
      for (const auto& [id, estimate] : at.estimates) {
        SCOPED_TRACE("job " + std::to_string(id));
        ASSERT_TRUE(estimate.start.has_value()) << estimate.unknown_because;
        EXPECT_EQ(*estimate.start, at.true_start[id]);
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 300);  // the generator leaves enough jobs pending at T
}

}  // namespace
}  // namespace sluice::sim

namespace sluice::sim {
namespace {

// The controller's coarse forecast (R-UX-8): exact within the window, and beyond it never
// earlier than the exact estimate and late by at most about the fraction of the distance.
TEST(EstimateTest, CoarseStepsBeyondTheWindowErrLateByAtMostTheFraction) {
  core::ClusterState state = ClusterBuilder().Hosts(2, 2).State();
  testing::SubmitRunning(state, JobBuilder(1).Tasks(4).Limit(1000), 0);
  JobId id = 2;
  for (Duration limit : {500, 7000, 3, 20000, 77, 9000, 1234, 40000}) {
    testing::Submit(state, JobBuilder(id++).Tasks(4).Limit(limit));
  }
  const auto exact = core::EstimateStarts(state, 0, std::nullopt);
  const auto coarse = core::EstimateStarts(
      state, 0, std::nullopt, core::EstimateOptions{.exact_window = 2000, .coarse_fraction = 0.05});
  ASSERT_EQ(exact.size(), coarse.size());
  bool any_later = false;
  for (const auto& [job, estimate] : exact) {
    ASSERT_TRUE(estimate.start && coarse.at(job).start) << job;
    const Instant e = *estimate.start;
    const Instant c = *coarse.at(job).start;
    if (e <= 2000) {
      EXPECT_EQ(c, e) << job;
    }
    EXPECT_GE(c, e) << job;
    EXPECT_LE(c, e + e / 5) << job;  // a few steps of 5% each at most
    any_later = any_later || c > e;
  }
  EXPECT_TRUE(any_later);
}

}  // namespace
}  // namespace sluice::sim
