// Hand-computed checks of the reference simulator itself (R-SIM-1b..1e, R-SIM-2), so that a
// disagreement with `sluice sim` can be blamed on the right side.
#include "testing/reference_sim.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "testing/build_paths.h"

namespace sluice::reference_sim {
namespace {

Job MakeJob(int64_t id, Instant submit, Duration runtime, int64_t procs, Duration estimate) {
  return Job{.id = id, .submit = submit, .runtime = runtime, .procs = procs, .estimate = estimate};
}

struct Case {
  std::string_view name;
  int64_t procs;
  std::vector<Job> jobs;  // submission order
  std::vector<Instant> want_fcfs;
  std::vector<Instant> want_easy;
};

// Each schedule is worked out by hand in the comments; times in seconds.
std::vector<Case> Cases() {
  return {
      {
          // t=0: 1 starts (free 2); head 2 needs 3. EASY: S=10 (2+2 >= 3), extra=1.
          // t=1: 3 arrives; FCFS waits behind 2; EASY starts it since 1+2 <= S.
          // t=10: 1 ends; FCFS starts 2 then 3.
          .name = "blocked_head",
          .procs = 4,
          .jobs = {MakeJob(1, 0, 10, 2, 10), MakeJob(2, 0, 5, 3, 5), MakeJob(3, 1, 2, 1, 2)},
          .want_fcfs = {0, 10, 10},
          .want_easy = {0, 10, 1},
      },
      {
          // EASY t=0: 1 starts (free 4); head 2 needs 8: S=100, extra=4+6-8=2.
          //   3 fits, 0+500 > S, 2 <= extra -> starts, extra=0, free 2.
          //   4 fits, 0+500 > S, 1 > extra -> waits. 5 fits, 0+50 <= S -> starts, free 0.
          //   6 does not fit.
          // t=50: 5 ends (free 2); S=100 (2+6 >= 8), extra 0; 4 waits; 6: 50+10 <= S, starts.
          // t=100: 1 ends; 2 starts (free 0); 4 is the head: S=150 (2's end), extra 7.
          // t=150: 2 ends; 4 starts.
          // FCFS: 2 and 3 at 100 (free 0 after), then 4, 5, 6 at 150.
          .name = "extra_rule",
          .procs = 10,
          .jobs = {MakeJob(1, 0, 100, 6, 100), MakeJob(2, 0, 50, 8, 50), MakeJob(3, 0, 500, 2, 500),
                   MakeJob(4, 0, 500, 1, 500), MakeJob(5, 0, 50, 2, 50), MakeJob(6, 0, 10, 1, 10)},
          .want_fcfs = {0, 100, 100, 150, 150, 150},
          .want_easy = {0, 100, 0, 150, 0, 50},
      },
      {
          // t=0: cycle 1 starts 1 (runtime 0, all 4 procs); 2 waits. 1 ends at 0 after the
          // cycle, and a second cycle at t=0 starts 2 and 3 (R-SIM-1d).
          // t=5: 4 arrives, free 0 (EASY: S=10, extra=1, nothing else to scan).
          // t=10: 2 ends; 4 starts.
          .name = "zero_runtime",
          .procs = 4,
          .jobs = {MakeJob(1, 0, 0, 4, 100), MakeJob(2, 0, 10, 2, 10), MakeJob(3, 0, 50, 2, 50),
                   MakeJob(4, 5, 5, 1, 5)},
          .want_fcfs = {0, 0, 0, 10},
          .want_easy = {0, 0, 0, 10},
      },
      {
          // t=10: 1 ends, then 3 and 4 arrive, then one cycle. Queue: 2, 3, 4.
          //   2 starts (free 3); head 3 needs 4.
          //   FCFS: 4 waits. t=11: 2 ends, 3 starts. t=16: 3 ends, 4 starts.
          //   EASY: S=11 (2's end: 3+1 >= 4), extra 0; 4: 10+1 <= S, starts (free 2).
          //   4 overruns its estimate of 1 and is not killed: at t=11 2 ends (free 3), 4's
          //   expected end is max(11, 11); 3 still waits. t=15: 4 ends, 3 starts.
          .name = "ties_and_overrun",
          .procs = 4,
          .jobs = {MakeJob(1, 0, 10, 4, 10), MakeJob(2, 5, 1, 1, 1), MakeJob(3, 10, 5, 4, 5),
                   MakeJob(4, 10, 5, 1, 1)},
          .want_fcfs = {0, 10, 11, 16},
          .want_easy = {0, 10, 15, 10},
      },
      {
          // Expected end = max(start + estimate, now). At t=12 (free 1), both 1 (0+12) and
          // 2 (10+1, overrun) have expected end 12; 1 started first, so S=12 with
          // extra = 1+2-3 = 0, and 4 (12+100 > S, 1 > extra) waits. Unclamped, 2 would
          // come first and give extra 1, wrongly starting 4 at 12.
          // t=20: 1 ends (free 3), 3 starts. t=30: 2 and 3 end, 4 starts.
          .name = "expected_end_clamped_to_now",
          .procs = 4,
          .jobs = {MakeJob(1, 0, 20, 2, 12), MakeJob(2, 10, 20, 1, 1), MakeJob(3, 12, 10, 3, 10),
                   MakeJob(4, 12, 100, 1, 100)},
          .want_fcfs = {0, 10, 20, 30},
          .want_easy = {0, 10, 20, 30},
      },
  };
}

TEST(ReferenceSimTest, StartTimesMatchHandComputedSchedules) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    Workload workload{.procs = c.procs, .jobs = c.jobs, .skipped = 0};
    EXPECT_EQ(Simulate(workload, Policy::kFcfs).start, c.want_fcfs) << "fcfs";
    EXPECT_EQ(Simulate(workload, Policy::kEasy).start, c.want_easy) << "easy";
  }
}

TEST(ReferenceSimTest, ShadowAndExtraAreComputedOncePerCycle) {
  Workload workload{.procs = 10, .jobs = Cases()[1].jobs, .skipped = 0};
  std::vector<CycleTrace> cycles;
  Simulate(workload, Policy::kEasy,
           {.on_cycle = [&](const CycleTrace& t) { cycles.push_back(t); }});
  ASSERT_FALSE(cycles.empty());
  const CycleTrace& first = cycles.front();
  EXPECT_EQ(first.now, 0);
  EXPECT_TRUE(first.shadow_computed);
  EXPECT_EQ(first.head, 2);
  EXPECT_EQ(first.shadow, 100);
  EXPECT_EQ(first.extra, 2);  // as computed, before 3 consumed it
  EXPECT_EQ(first.started, (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(first.queue_before, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(ReferenceSimTest, ZeroRuntimeJobGetsASecondCycleAtTheSameTime) {
  Workload workload{.procs = 4, .jobs = Cases()[2].jobs, .skipped = 0};
  std::vector<CycleTrace> cycles;
  Simulate(workload, Policy::kFcfs,
           {.on_cycle = [&](const CycleTrace& t) { cycles.push_back(t); }});
  ASSERT_GE(cycles.size(), 2u);
  EXPECT_EQ(cycles[0].now, 0);
  EXPECT_EQ(cycles[0].started, (std::vector<int64_t>{1}));
  EXPECT_EQ(cycles[1].now, 0);
  EXPECT_EQ(cycles[1].started, (std::vector<int64_t>{2, 3}));
}

TEST(ReferenceSimTest, MetricsFollowTheirFormulas) {
  Workload workload{.procs = 4, .jobs = Cases()[0].jobs, .skipped = 3};
  Metrics m = Simulate(workload, Policy::kFcfs).metrics;
  EXPECT_EQ(m.jobs, 3);
  EXPECT_EQ(m.skipped, 3);
  EXPECT_DOUBLE_EQ(m.avg_wait, 19.0 / 3);  // waits 0, 10, 9
  EXPECT_DOUBLE_EQ(m.max_wait, 10);
  // bsld: max(1, 10/10) = 1; (10+5)/max(5,10) = 1.5; (9+2)/10 = 1.1.
  EXPECT_DOUBLE_EQ(m.avg_bsld, (1 + 1.5 + 1.1) / 3);
  EXPECT_DOUBLE_EQ(m.makespan, 15);  // last end 15 (job 2) - first submit 0
  EXPECT_DOUBLE_EQ(m.utilization, (10.0 * 2 + 5 * 3 + 2 * 1) / (4 * 15));
}

// A data line of 18 fields with the given id, submit, runtime, alloc, req procs and req time.
std::string SwfLine(int id, int submit, int runtime, int alloc, int req_procs, int req_time) {
  return std::to_string(id) + " " + std::to_string(submit) + " 0 " + std::to_string(runtime) + " " +
         std::to_string(alloc) + " -1 -1 " + std::to_string(req_procs) + " " +
         std::to_string(req_time) + " -1 1 1 1 -1 1 -1 -1 -1\n";
}

TEST(ReferenceSwfTest, AppliesFieldRulesAndFilters) {
  std::string text = "; MaxNodes: 8\n;  MaxProcs: 4  \n" + SwfLine(1, 5, 10, 2, 3, 20) +
                     SwfLine(2, 6, 7, 2, -1, -1) +    // procs from field 5, estimate = runtime
                     SwfLine(3, 6, -1, 1, 1, 10) +    // runtime < 0: skipped
                     SwfLine(4, 6, 10, 5, 5, 10) +    // procs > P: skipped
                     SwfLine(5, -1, 10, 1, 1, 10) +   // submit < 0: skipped
                     SwfLine(6, 7, 0, 1, 1, 10) +     // runtime 0: kept
                     "7 8 0 10 1 -1 -1 1\n" +         // 8 fields: skipped
                     "8 8 0 10 1 -1 -1 1 abc -1\n" +  // non-number: skipped
                     SwfLine(9, 8, 10, -1, -1, 10) +  // no processors: skipped
                     SwfLine(12, 9, 1, 1, 1, 1) +     // ties on submit keep file order
                     SwfLine(11, 9, 1, 1, 1, 1) + SwfLine(10, 1, 3, 1, 1, 5);  // sorts first
  Result<Workload> parsed = ParseSwf(text, {});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->procs, 4);  // MaxProcs wins over MaxNodes
  EXPECT_EQ(parsed->skipped, 6);
  std::vector<int64_t> ids;
  for (const Job& j : parsed->jobs) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<int64_t>{10, 1, 2, 6, 12, 11}));
  const Job& first = parsed->jobs[1];
  EXPECT_EQ(first.submit, 5);
  EXPECT_EQ(first.runtime, 10);
  EXPECT_EQ(first.procs, 3);
  EXPECT_EQ(first.estimate, 20);
  EXPECT_EQ(parsed->jobs[2].procs, 2);
  EXPECT_EQ(parsed->jobs[2].estimate, 7);
  EXPECT_EQ(parsed->jobs[3].runtime, 0);

  Result<Workload> first_three = ParseSwf(text, {.max_jobs = 3});
  ASSERT_TRUE(first_three.has_value());
  ASSERT_EQ(first_three->jobs.size(), 3u);
  EXPECT_EQ(first_three->jobs[2].id, 2);
  EXPECT_EQ(first_three->skipped, 6);  // counted over the whole file
}

TEST(ReferenceSwfTest, MachineSizeFromOptionMaxProcsOrMaxNodes) {
  std::string line = SwfLine(1, 0, 10, 6, 6, 10);
  EXPECT_EQ(ParseSwf("; MaxNodes: 8\n" + line, {})->procs, 8);
  EXPECT_EQ(ParseSwf("; MaxProcs: 0\n; MaxNodes: 8\n" + line, {})->procs, 8);
  EXPECT_EQ(ParseSwf("; MaxProcs: 16\n; MaxNodes: 8\n" + line, {})->procs, 16);
  Result<Workload> small = ParseSwf("; MaxProcs: 16\n" + line, {.procs = 4});
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->procs, 4);
  EXPECT_EQ(small->skipped, 1);  // 6 processors > 4
  EXPECT_FALSE(ParseSwf(line, {}).has_value());
}

TEST(ReferenceSwfTest, LoadsTheGzippedKthTrace) {
  std::string path =
      std::string(sluice::testing::SourceDir()) + "/../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no trace at " << path;
  Result<Workload> kth = LoadSwf(path, {});
  ASSERT_TRUE(kth.has_value()) << kth.error().ToString();
  EXPECT_EQ(kth->procs, 100);
  // 28,476 data lines; job 27313 has no processor count (traces/README.md).
  EXPECT_EQ(kth->jobs.size(), 28475u);
  EXPECT_EQ(kth->skipped, 1);
}

}  // namespace
}  // namespace sluice::reference_sim
