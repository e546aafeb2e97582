// The pending-reasons audit (issue 6, R-PR-1, R-PR-3; docs/design/pending-reasons.md): random
// workloads with every mechanism enabled — host states, select/span/same/exclusive requests,
// shared resources, holds and releases, begin times, dependencies, dispatch windows, an
// inactive queue, run and slot limits, max_capacity, user limits, fairshare, preemption,
// named per-user and per-host limits, all three policies. After every cycle:
//  1. every job left waiting in a queue has exactly one explanation, with at least one
//     detail, and its main reason is its most severe detail (a job never waits silently);
//  2. a fresh evaluation gives the same main reason: the same workload where no two jobs
//     share an unsatisfiable-cache key (each asks for a zero amount of its own resource,
//     which changes no decision) yields the same decisions, cycle by cycle, and the same
//     main reason for every pending job (R-PR-3: the cache's reasons are the original ones).
// The seed is printed on failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/cycle/scheduler.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace sluice::sim {
namespace {

struct Scenario {
  core::ClusterConfig config;
  Workload workload;
};

class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool OneIn(int64_t n) { return Uniform(1, n) == 1; }

 private:
  std::mt19937_64 rng_;
};

core::QueueSpec RandomQueue(Random& r, std::string name, int32_t priority) {
  core::QueueSpec q{.name = std::move(name), .priority = priority};
  q.policy = static_cast<core::PolicyKind>(r.Uniform(0, 2));
  q.max_bypass = static_cast<int32_t>(r.Uniform(0, 3));
  q.max_head_wait = r.Uniform(0, 200);
  if (r.OneIn(4)) q.run_limit = static_cast<int32_t>(r.Uniform(1, 4));
  if (r.OneIn(5)) q.slot_limit = r.Uniform(4, 12);
  if (r.OneIn(4)) q.max_capacity = static_cast<double>(r.Uniform(40, 90));
  if (r.OneIn(4)) q.user_limit_pct = static_cast<double>(r.Uniform(20, 60));
  if (r.OneIn(5)) q.windows = {"00:00-00:10"};  // open 600 s a day: closed most of the run
  if (r.OneIn(3)) q.fairshare = {{"alice", 2}, {"bob", 1}, {"default", 1}};
  return q;
}

Scenario RandomScenario(uint64_t seed) {
  Random r(seed);
  Scenario s;
  const int hosts = static_cast<int>(r.Uniform(2, 6));
  for (int h = 0; h < hosts; ++h) {
    core::HostSpec host{.name = "h" + std::to_string(h),
                        .slots = static_cast<int32_t>(r.Uniform(1, 4))};
    host.resources["mem"] = r.Uniform(1, 4) * 1000;
    host.attributes["type"] = r.OneIn(3) ? "gpu" : "linux";
    host.attributes["rack"] = "r" + std::to_string(h % 2);
    if (r.OneIn(8)) host.state = core::HostState::kClosed;
    if (r.OneIn(10)) host.state = core::HostState::kUnavail;
    s.config.hosts.push_back(std::move(host));
  }
  s.config.shared_resources["lic"] = r.Uniform(1, 3);
  core::QueueSpec normal = RandomQueue(r, "normal", 0);
  core::QueueSpec high = RandomQueue(r, "high", 10);
  if (r.OneIn(2)) {
    normal.preemptable = true;
    high.preemptive = true;
    high.preempt_grace = 0;
  }
  core::QueueSpec paused{.name = "paused", .active = false};
  s.config.queues = {normal, high, paused};
  if (r.OneIn(2)) {
    core::LimitSpec limit{.name = "u_slots", .slots = r.Uniform(2, 5)};
    limit.users = {.set = true, .per_each = true, .names = {}};
    s.config.limits.push_back(limit);
  }
  if (r.OneIn(3)) {
    core::LimitSpec limit{.name = "one_per_host", .jobs = 1};
    limit.hosts = {.set = true, .per_each = true, .names = {}};
    s.config.limits.push_back(limit);
  }
  const char* requests[] = {"",
                            "",
                            "select[type==linux]",
                            "rusage[mem=800]",
                            "span[hosts=1]",
                            "span[ptile=2]",
                            "rusage[lic=1]",
                            "select[mem>1500]",
                            "same[rack]",
                            "{select[type==gpu]} || {span[hosts=1]}"};
  const char* users[] = {"alice", "bob", "carol"};
  const char* queues[] = {"normal", "normal", "high", "paused"};
  const int jobs = static_cast<int>(r.Uniform(5, 50));
  Instant t = 0;
  for (int i = 0; i < jobs; ++i) {
    WorkloadJob job;
    job.line = i + 1;
    job.spec.id = i + 1;
    job.spec.user = users[r.Uniform(0, 2)];
    job.spec.queue = queues[r.Uniform(0, 3)];
    t += r.OneIn(3) ? 0 : r.Uniform(0, 40);
    job.spec.submit_time = t;
    job.spec.min_tasks = job.spec.max_tasks = static_cast<int32_t>(r.Uniform(1, 6));
    job.spec.resreq = requests[r.Uniform(0, 9)];
    job.runtime = r.OneIn(6) ? 0 : r.Uniform(1, 300);
    if (!r.OneIn(4)) job.spec.run_limit = job.runtime + r.Uniform(0, 50);
    if (r.OneIn(8)) job.spec.exclusive = true;
    if (r.OneIn(8)) job.spec.begin_time = t + r.Uniform(1, 200);
    if (r.OneIn(8)) {
      job.spec.hold = true;
      if (r.OneIn(2)) job.release_at = t + r.Uniform(1, 300);
    }
    if (i > 0 && r.OneIn(6)) job.spec.depend = "done(" + std::to_string(r.Uniform(1, i)) + ")";
    if (r.OneIn(15)) job.cancel_at = t + r.Uniform(0, 300);
    job.spec.priority = static_cast<int32_t>(r.Uniform(0, 1));
    s.workload.jobs.push_back(std::move(job));
  }
  return s;
}

// The same scenario with no two jobs sharing an unsatisfiable-cache key: job k also asks for
// rusage[zk=0] of its own host resource zk (every host has 1), which no decision reads. (A
// job tried twice in one cycle may still meet its own entry: the same job, the same reason.)
Scenario WithoutCacheHits(Scenario s) {
  for (core::HostSpec& host : s.config.hosts) {
    for (const WorkloadJob& job : s.workload.jobs)
      host.resources["z" + std::to_string(job.spec.id)] = 1;
  }
  for (WorkloadJob& job : s.workload.jobs) {
    const std::string amount = "z" + std::to_string(job.spec.id) + "=0";
    const std::string zero = "rusage[" + amount + "]";
    std::string& text = job.spec.resreq;
    if (const size_t at = text.find("rusage["); at != std::string::npos) {  // one section only
      text.insert(at + 7, amount + ":");
    } else if (text.empty()) {
      text = zero;
    } else if (text.front() == '{') {  // every alternative gets it
      std::string out;
      for (char c : text) out += c == '}' ? " " + zero + "}" : std::string(1, c);
      text = out;
    } else {
      text += " " + zero;
    }
  }
  return s;
}

struct CycleLog {
  Instant t = 0;
  std::vector<std::string> decisions;         // starts (with hosts), fails, preemptions
  std::map<JobId, core::ReasonCode> main_of;  // explained pending jobs
  int64_t cache_hits = 0;
};

std::string Describe(const core::Decision& decision) {
  if (const auto* start = std::get_if<core::StartJob>(&decision)) {
    std::string out = "start " + std::to_string(start->job);
    for (const core::HostGrant& g : start->allocation.hosts) {
      out += " " + std::to_string(g.host) + ":" + std::to_string(g.slots);
    }
    return out;
  }
  if (const auto* fail = std::get_if<core::FailJob>(&decision))
    return "fail " + std::to_string(fail->job);
  if (const auto* preempt = std::get_if<core::PreemptJob>(&decision)) {
    return "preempt " + std::to_string(preempt->victim) + " for " +
           std::to_string(preempt->for_job);
  }
  return "";
}

// Runs a scenario explaining every cycle; checks (1) after each cycle and logs it.
std::vector<CycleLog> RunAudited(const Scenario& s) {
  std::vector<CycleLog> log;
  SimOptions options{.explain_every_cycle = true};
  options.after_cycle = [&log](const core::ClusterState& state, Instant t,
                               const core::CycleResult& cycle) {
    CycleLog entry{.t = t, .decisions = {}, .main_of = {}, .cache_hits = cycle.stats.cache_hits};
    std::set<JobId> victims;
    for (const core::Decision& decision : cycle.decisions) {
      if (const auto* pend = std::get_if<core::PendJob>(&decision)) {
        SCOPED_TRACE("t=" + std::to_string(t) + " job " + std::to_string(pend->job));
        ASSERT_FALSE(pend->reasons.details.empty()) << "a job waits without a reason";
        ASSERT_TRUE(entry.main_of.emplace(pend->job, pend->reasons.main).second)
            << "explained twice";
        int most = -1;
        for (const core::ReasonDetail& d : pend->reasons.details)
          most = std::max(most, core::Severity(d.code));
        EXPECT_EQ(core::Severity(pend->reasons.main), most)
            << "main reason is not the most severe detail";
        continue;
      }
      if (const auto* preempt = std::get_if<core::PreemptJob>(&decision))
        victims.insert(preempt->victim);
      std::string text = Describe(decision);
      if (!text.empty()) entry.decisions.push_back(std::move(text));
    }
    for (const core::Queue& queue : state.topology().queues()) {
      for (const core::PendingEntry& pending : queue.pending) {
        const JobId id = pending.job->spec.id;
        if (victims.contains(id)) continue;  // requeued after the cycle by the simulator
        EXPECT_TRUE(entry.main_of.contains(id)) << "t=" << t << ": job " << id << " waits in queue "
                                                << queue.spec.name << " with no reason";
      }
    }
    log.push_back(std::move(entry));
  };
  Result<core::ClusterState> state = core::ClusterState::Create(s.config);
  EXPECT_TRUE(state.has_value()) << state.error().ToString();
  if (!state) return log;
  Simulator simulator(std::move(*state), s.workload, std::move(options));
  Result<SimResult> result = simulator.Run(nullptr);
  EXPECT_TRUE(result.has_value()) << result.error().ToString();
  return log;
}

TEST(ReasonsAuditTest, EveryWaitingJobHasTheReasonAFreshEvaluationGives) {
  int64_t explained = 0;
  int64_t cache_hits = 0;
  std::set<core::ReasonCode> seen;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Scenario scenario = RandomScenario(seed);
    const std::vector<CycleLog> with_cache = RunAudited(scenario);
    const std::vector<CycleLog> fresh = RunAudited(WithoutCacheHits(scenario));
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(with_cache.size(), fresh.size());
    for (size_t c = 0; c < fresh.size(); ++c) {
      SCOPED_TRACE("cycle at t=" + std::to_string(fresh[c].t));
      ASSERT_EQ(with_cache[c].decisions, fresh[c].decisions);
      ASSERT_EQ(with_cache[c].main_of.size(), fresh[c].main_of.size());
      for (const auto& [job, main] : with_cache[c].main_of) {
        auto it = fresh[c].main_of.find(job);
        ASSERT_NE(it, fresh[c].main_of.end()) << "job " << job;
        EXPECT_EQ(core::ToString(main), core::ToString(it->second)) << "job " << job;
        seen.insert(main);
      }
      explained += static_cast<int64_t>(with_cache[c].main_of.size());
      cache_hits += with_cache[c].cache_hits;
    }
  }
  // The generator must exercise the cache and most mechanisms, or the audit proves little.
  EXPECT_GT(explained, 2000);
  EXPECT_GT(cache_hits, 50);
  std::string codes;
  for (core::ReasonCode code : seen) codes += std::string(core::ToString(code)) + " ";
  RecordProperty("main_reasons_seen", codes);
  EXPECT_GE(seen.size(), 14u) << codes;
}

}  // namespace
}  // namespace sluice::sim
