// Property test of advance reservations (R-RSV-2) on seeded random workloads, driven
// through the core cycle by cycle under every policy:
//  - no job outside a reservation ever holds a reserved host inside one of its windows: a
//    job started on a host ends (by its run limit) before the host's next window begins;
//  - a job inside a reservation starts only while a window is open and only on the
//    reservation's hosts, and ends (window end + overrun) before any other reservation's
//    window on them begins (MAINT outranks);
//  - no host runs more than its slots; every pending job has a reason;
//  - the workloads do exercise the rules (jobs start inside reservations and next to them).
// The driver ends each job at its run limit, or a job inside a reservation at its window's
// end + overrun, as the server and the simulator do.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

constexpr PolicyKind kPolicies[] = {PolicyKind::kFifo, PolicyKind::kEasyBackfill,
                                    PolicyKind::kBoundedBackfill,
                                    PolicyKind::kPredictiveBackfill};

struct Counts {
  int inside = 0;      // jobs started inside a reservation
  int beside = 0;      // jobs outside reservations started on a reserved host
};

// Up to three reservations on random hosts with one to three windows in [0, 1500), the
// last one sometimes MAINT (which may overlap the others).
std::vector<AdvanceReservationSpec> RandomReservations(std::mt19937_64& rng, int hosts) {
  auto uniform = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  std::vector<AdvanceReservationSpec> specs;
  std::vector<int> next_free(static_cast<size_t>(hosts), 0);  // non-MAINT windows never overlap
  const int count = uniform(1, 3);
  for (int r = 0; r < count; ++r) {
    AdvanceReservationSpec spec{.name = "r" + std::to_string(r), .users = {"u1"}};
    spec.maint = r == count - 1 && uniform(0, 2) == 0;
    spec.overrun = uniform(0, 1) * 30;
    std::set<int> chosen;
    for (int n = uniform(1, std::max(1, hosts / 2)); n > 0; --n) chosen.insert(uniform(0, hosts - 1));
    int start = 0;
    for (int h : chosen) start = std::max(start, spec.maint ? 0 : next_free[static_cast<size_t>(h)]);
    Instant at = start + uniform(20, 300);
    for (int w = uniform(1, 3); w > 0; --w) {
      const Instant end = at + uniform(50, 250);
      spec.windows.push_back({at, end});
      at = end + uniform(50, 300);
    }
    for (int h : chosen) {
      spec.hosts.push_back("h" + std::to_string(h + 1));
      if (!spec.maint) next_free[static_cast<size_t>(h)] = static_cast<int>(at);
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

// The run of a started job: [start, end) on its hosts, with end as the driver enforces it.
Instant EnforcedEnd(const Job& job, const ReservationBook& book) {
  Instant end = job.EstimatedEnd();
  if (job.spec.reservation.empty()) return end;
  const int32_t r = book.Find(job.spec.reservation);
  std::optional<ReservationWindow> w = book.OpenWindow(r, job.start_time);
  return std::min(end, AddDuration(w->end, book.spec(r).overrun));
}

void CheckStart(const Job& job, const ClusterState& state, Counts& counts) {
  const ReservationBook& book = state.reservations();
  const Instant start = job.start_time;
  const Instant end = EnforcedEnd(job, book);
  const int32_t own = job.spec.reservation.empty() ? -1 : book.Find(job.spec.reservation);
  if (own >= 0) {
    EXPECT_TRUE(book.OpenWindow(own, start).has_value())
        << "job " << job.spec.id << " started outside its reservation's windows at " << start;
    ++counts.inside;
  }
  for (const HostGrant& g : job.allocation.hosts) {
    if (own >= 0) {
      EXPECT_TRUE(book.Covers(own, g.host))
          << "job " << job.spec.id << " of " << job.spec.reservation.str() << " on host " << g.host;
    }
    const Instant from = book.ReservedFrom(g.host, start, own);
    EXPECT_LE(end, from) << "job " << job.spec.id << " on host " << g.host << " runs [" << start
                         << ", " << end << ") into a window beginning at " << from;
    if (own < 0 && book.FirstReservationOn(g.host, start) >= 0) ++counts.beside;
  }
}

Counts CheckRun(uint64_t seed, PolicyKind policy) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " policy " + std::string(ToString(policy)));
  Counts counts;
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  const int hosts = uniform(2, 6);
  testing::ClusterBuilder builder;
  for (int h = 0; h < hosts; ++h) builder.Host("h" + std::to_string(h + 1), uniform(1, 3));
  ClusterState state = builder.Policy(policy).State();
  const Status set = Apply(ReservationsChanged{RandomReservations(rng, hosts)}, 0, state);
  EXPECT_TRUE(set.ok()) << set.ToString();
  if (!set.ok()) return counts;
  Scheduler scheduler;
  std::map<JobId, Instant> ends;  // running jobs and when the driver ends them
  JobId next_id = 1;
  for (Instant t = 0; t < 2000; t += uniform(1, 25)) {
    for (int n = uniform(0, 2); n > 0; --n) {
      testing::JobBuilder job(next_id++);
      job.Tasks(uniform(1, 2)).User("u" + std::to_string(uniform(1, 2))).Submit(t);
      if (uniform(0, 5) > 0) job.Limit(uniform(10, 300));
      const int r = uniform(0, 5);
      if (r < static_cast<int>(state.reservations().size())) {
        job.User("u1").Reservation(state.reservations().spec(r).name);
      }
      const Status submitted = Apply(JobSubmitted{job.Build()}, t, state);
      EXPECT_TRUE(submitted.ok()) << submitted.ToString();
    }
    for (auto it = ends.begin(); it != ends.end();) {
      if (it->second > t) {
        ++it;
        continue;
      }
      EXPECT_TRUE(Apply(JobFinished{.job = it->first}, t, state).ok());
      it = ends.erase(it);
    }
    const CycleResult cycle = scheduler.RunCycle(state, t, {.explain = true});
    for (const Decision& d : cycle.decisions) {
      if (const auto* p = std::get_if<PendJob>(&d)) {
        EXPECT_FALSE(p->reasons.empty()) << "job " << p->job << " has no reason";
      }
    }
    Commit(cycle, t, state);
    for (const Decision& d : cycle.decisions) {
      const auto* s = std::get_if<StartJob>(&d);
      if (s == nullptr) continue;
      const Job& job = *state.FindJob(s->job);
      CheckStart(job, state, counts);
      ends[job.spec.id] = EnforcedEnd(job, state.reservations());
    }
    for (const Host& host : state.topology().hosts()) EXPECT_LE(host.used_slots, host.spec.slots);
  }
  return counts;
}

TEST(ReservationPropertyTest, NoJobRunsIntoAReservationItIsNotIn) {
  Counts total;
  for (PolicyKind policy : kPolicies) {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      const Counts counts = CheckRun(seed, policy);
      total.inside += counts.inside;
      total.beside += counts.beside;
    }
  }
  // The workloads exercise both sides of the rule.
  EXPECT_GT(total.inside, 100);
  EXPECT_GT(total.beside, 100);
}

}  // namespace
}  // namespace sluice::core
