// Differential test (issue 8): the optimized core against a straightforward reference path
// on seeded random workloads. Decisions AND reasons must be identical, cycle after cycle.
//
// Optimized: Scheduler() — the one-host fast path with per-select cursors, memoized select
// verdicts read directly in host scans, the host view's remembered names and attribute
// columns, the unsatisfiable cache keyed by request shape.
// Reference: Scheduler(ResreqAllocator(reference)) — every nomination scans every host of
// the queue, evaluates select[] through PassesSelect per host, and looks every name up in
// the host's maps (PrimaryTask::reference).
// A second check: keying the unsatisfiable cache by user and project as well (what a named
// limit switches on) changes no start, failure or admission record.
// Workloads come from the bench's generator (src/sim/synthetic.h) at a small size: varied
// hosts, 40 shapes (selects, rusage, spans, same[], compounds, alternatives, exclusive),
// every policy, random free capacity and host states; each case runs several cycles with
// commits and job ends in between, so states diverge if any decision does.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "core/alloc/resreq_allocator.h"
#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "sim/synthetic.h"

namespace sluice::core {
namespace {

std::string Render(const ReasonDetail& d) {
  std::ostringstream out;
  out << ToString(d.code) << " res=" << d.resource << " need=" << d.needed
      << " avail=" << d.available << " hosts=" << d.hosts << " one=" << d.one_host
      << " same=" << d.same << " per=" << d.per_host << " devices=" << d.devices
      << " job=" << d.job << " t=" << d.time
      << " limit=" << d.limit << " scope=" << d.scope << " used=" << d.used << " max=" << d.max
      << " cond=" << d.condition << " never=" << d.never;
  return out.str();
}

// Every field of every decision, one line each: a mismatch shows where.
std::vector<std::string> Lines(const CycleResult& result, bool pend) {
  std::vector<std::string> lines;
  for (const Decision& decision : result.decisions) {
    std::ostringstream out;
    if (const auto* start = std::get_if<StartJob>(&decision)) {
      out << "start " << start->job << (start->backfilled ? " backfilled" : "");
      for (const HostGrant& g : start->allocation.hosts) {
        out << " h" << g.host << ":" << g.slots << (g.whole_host ? "x" : "");
        for (const ResourceAmount& r : g.resources) out << "/r" << r.id << "=" << r.amount;
        if (g.gpus != 0) out << "/gpus=" << g.gpus;
      }
      for (const ResourceAmount& r : start->allocation.shared)
        out << " s" << r.id << "=" << r.amount;
    } else if (const auto* fail = std::get_if<FailJob>(&decision)) {
      out << "fail " << fail->job << " " << fail->message;
    } else if (const auto* update = std::get_if<UpdateAdmission>(&decision)) {
      out << "update " << update->job << " " << update->bypass_count << " "
          << update->first_blocked.value_or(-1) << " " << update->gate_since.value_or(-1);
    } else if (const auto* p = std::get_if<PendJob>(&decision)) {
      if (!pend) continue;
      out << "pend " << p->job << " main=" << ToString(p->reasons.main);
      for (const ReasonDetail& d : p->reasons.details) out << " [" << Render(d) << "]";
    }
    lines.push_back(out.str());
  }
  return lines;
}

struct Case {
  sim::SyntheticOptions options;
  std::vector<std::string> closed_hosts;
  std::vector<std::string> unavail_hosts;
};

Case RandomCase(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Case c;
  sim::SyntheticOptions& o = c.options;
  o.seed = seed;
  o.hosts = 30 + static_cast<int32_t>(rng() % 50);
  o.pending = 600 + static_cast<int64_t>(rng() % 600);
  o.shapes = 40;
  o.queues = 1 + static_cast<int32_t>(rng() % 3);
  o.users = 1 + static_cast<int32_t>(rng() % 6);
  o.free_slots = static_cast<int64_t>(rng() % 400);
  o.running = o.hosts + static_cast<int64_t>(rng() % 40);
  const PolicyKind policies[] = {PolicyKind::kFifo, PolicyKind::kEasyBackfill,
                                 PolicyKind::kBoundedBackfill};
  o.policy = policies[rng() % 3];
  const size_t width = std::to_string(o.hosts).size();
  for (int32_t i = 0; i < 3; ++i) {
    std::string number = std::to_string(1 + rng() % static_cast<uint64_t>(o.hosts));
    std::string name = "h" + std::string(width - number.size(), '0') + number;
    (i == 0 ? c.unavail_hosts : c.closed_hosts).push_back(name);
  }
  return c;
}

ClusterState Build(const Case& c, bool limited) {
  ClusterConfig config = sim::SyntheticCluster(c.options);
  // A named limit that never binds: the cache then keys by user and project as well.
  if (limited) config.limits.push_back(LimitSpec{.name = "roomy", .slots = 1000000});
  ClusterState state = std::move(ClusterState::Create(config)).value();
  const JobId next = sim::FillRunning(c.options, state).value();
  for (const std::string& host : c.closed_hosts)
    EXPECT_TRUE(state.SetHostState(host, HostState::kClosed).ok());
  for (const std::string& host : c.unavail_hosts)
    EXPECT_TRUE(state.SetHostState(host, HostState::kUnavail).ok());
  EXPECT_TRUE(sim::SubmitPending(c.options, sim::SyntheticShapes(c.options), next, state).ok());
  return state;
}

// Ends every third running job (by start order) so the next cycle has room again.
void EndSome(ClusterState& state, Instant now) {
  std::vector<JobId> ending;
  size_t i = 0;
  for (const RunningEntry& entry : state.running()) {
    if (i++ % 3 == 0) ending.push_back(entry.job->spec.id);
  }
  for (JobId id : ending) ASSERT_TRUE(Apply(JobFinished{.job = id}, now, state).ok());
}

constexpr int kCases = 12;
constexpr int kCycles = 4;

TEST(DifferentialTest, OptimizedAndReferencePathsDecideAndExplainAlike) {
  for (int n = 0; n < kCases; ++n) {
    const Case c = RandomCase(1000 + static_cast<uint64_t>(n));
    SCOPED_TRACE("seed " + std::to_string(c.options.seed) + " policy " +
                 std::string(ToString(c.options.policy)));
    ClusterState fast_state = Build(c, /*limited=*/false);
    ClusterState reference_state = Build(c, /*limited=*/false);
    Scheduler fast;
    Scheduler reference(std::make_unique<ResreqAllocator>(/*reference=*/true));
    for (int cycle = 0; cycle < kCycles; ++cycle) {
      const Instant now = 10 + 100 * cycle;
      const bool explain = cycle % 2 == 0 || n % 2 == 0;
      CycleResult a = fast.RunCycle(fast_state, now, {.explain = explain});
      CycleResult b = reference.RunCycle(reference_state, now, {.explain = explain});
      const std::vector<std::string> la = Lines(a, true);
      const std::vector<std::string> lb = Lines(b, true);
      ASSERT_EQ(la.size(), lb.size()) << "cycle " << cycle;
      for (size_t i = 0; i < la.size(); ++i)
        ASSERT_EQ(la[i], lb[i]) << "cycle " << cycle << " decision " << i;
      Commit(a, now, fast_state);
      Commit(b, now, reference_state);
      EndSome(fast_state, now + 50);
      EndSome(reference_state, now + 50);
    }
  }
}

TEST(DifferentialTest, KeyingTheCacheByShapeChangesNoDecision) {
  for (int n = 0; n < kCases / 2; ++n) {
    const Case c = RandomCase(2000 + static_cast<uint64_t>(n));
    SCOPED_TRACE("seed " + std::to_string(c.options.seed));
    ClusterState by_shape = Build(c, /*limited=*/false);
    ClusterState by_consumer = Build(c, /*limited=*/true);
    Scheduler scheduler;
    for (int cycle = 0; cycle < kCycles; ++cycle) {
      const Instant now = 10 + 100 * cycle;
      CycleResult a = scheduler.RunCycle(by_shape, now, {.explain = true});
      CycleResult b = scheduler.RunCycle(by_consumer, now, {.explain = true});
      EXPECT_GE(a.stats.cache_hits, b.stats.cache_hits);
      ASSERT_EQ(Lines(a, false), Lines(b, false)) << "cycle " << cycle;
      Commit(a, now, by_shape);
      Commit(b, now, by_consumer);
      EndSome(by_shape, now + 50);
      EndSome(by_consumer, now + 50);
    }
  }
}

}  // namespace
}  // namespace sluice::core
