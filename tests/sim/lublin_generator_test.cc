#include "sim/lublin_generator.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/workload_writer.h"
#include "testing/build_paths.h"

namespace sluice::sim {
namespace {

double OfferedLoad(const Workload& workload) {
  double work = 0;
  for (const WorkloadJob& job : workload.jobs) {
    work += static_cast<double>(job.runtime) * job.spec.max_tasks;
  }
  const double span = static_cast<double>(workload.jobs.back().spec.submit_time -
                                          workload.jobs.front().spec.submit_time);
  return work / (workload.procs * span);
}

TEST(LublinGeneratorTest, SameSeedSameBytesDifferentSeedDifferent) {
  const LublinOptions options{.jobs = 2000, .procs = 128, .load = 0.7, .seed = 42};
  const std::string first = WriteJsonl(GenerateLublin(options));
  EXPECT_EQ(WriteJsonl(GenerateLublin(options)), first);
  EXPECT_EQ(WriteSwf(GenerateLublin(options)), WriteSwf(GenerateLublin(options)));
  LublinOptions other = options;
  other.seed = 43;
  EXPECT_NE(WriteJsonl(GenerateLublin(other)), first);
}

// Pins the stream: a change here changes every generated workload (and golden files). The
// last submit is the load target: (156 + 8 * 12289 + 18132) / (128 * 0.7) = 1301.3 s.
TEST(LublinGeneratorTest, PinnedOutputForSeed1) {
  EXPECT_EQ(WriteJsonl(GenerateLublin({.jobs = 3, .procs = 128, .load = 0.7, .seed = 1})),
            "{\"id\": 1, \"submit\": 0, \"user\": \"u2\", \"tasks\": 1, \"runtime\": 156, "
            "\"run_limit\": 300}\n"
            "{\"id\": 2, \"submit\": 33, \"user\": \"u1\", \"tasks\": 8, \"runtime\": 12289, "
            "\"run_limit\": 14400}\n"
            "{\"id\": 3, \"submit\": 1301, \"user\": \"u1\", \"tasks\": 1, \"runtime\": 18132, "
            "\"run_limit\": 28800}\n");
}

TEST(LublinGeneratorTest, ShapeOfTheWorkload) {
  struct Case {
    std::string_view name;
    LublinOptions options;
  };
  const std::vector<Case> cases = {
      {"1 proc", {.jobs = 300, .procs = 1, .load = 0.7, .seed = 1}},
      {"2 procs", {.jobs = 300, .procs = 2, .load = 0.7, .seed = 2}},
      {"7 procs", {.jobs = 500, .procs = 7, .load = 0.5, .seed = 3}},
      {"100 procs", {.jobs = 3000, .procs = 100, .load = 0.9, .seed = 4}},
      {"128 procs", {.jobs = 3000, .procs = 128, .load = 0.7, .seed = 5}},
      {"1024 procs, overload", {.jobs = 3000, .procs = 1024, .load = 1.5, .seed = 6}},
      {"low load", {.jobs = 1000, .procs = 64, .load = 0.1, .seed = 7}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Workload workload = GenerateLublin(c.options);
    ASSERT_EQ(workload.jobs.size(), static_cast<size_t>(c.options.jobs));
    EXPECT_EQ(workload.procs, c.options.procs);
    EXPECT_EQ(workload.skipped, 0);
    EXPECT_EQ(workload.jobs.front().spec.submit_time, 0);
    const int64_t max_users =
        std::min<int64_t>(100, std::llround(std::sqrt(static_cast<double>(c.options.jobs))));
    for (size_t i = 0; i < workload.jobs.size(); ++i) {
      const WorkloadJob& job = workload.jobs[i];
      ASSERT_EQ(job.spec.id, static_cast<JobId>(i + 1));
      if (i > 0) {
        ASSERT_LE(workload.jobs[i - 1].spec.submit_time, job.spec.submit_time);
      }
      ASSERT_GE(job.spec.min_tasks, 1);
      ASSERT_LE(job.spec.max_tasks, c.options.procs);
      ASSERT_EQ(job.spec.min_tasks, job.spec.max_tasks);
      ASSERT_GE(job.runtime, 1);
      ASSERT_LE(job.runtime, 162755);  // e^12
      ASSERT_TRUE(job.spec.run_limit.has_value());
      ASSERT_GE(*job.spec.run_limit, job.runtime);
      ASSERT_EQ(job.spec.queue, "");
      ASSERT_EQ(job.spec.user.str().front(), 'u');
      const int64_t user = std::stoll(job.spec.user.str().substr(1));
      ASSERT_GE(user, 1);
      ASSERT_LE(user, max_users);
    }
    EXPECT_NEAR(OfferedLoad(workload), c.options.load, 0.02 * c.options.load);
  }
}

// Sanity of the distributions against the model's parameters (batch jobs, 128 nodes).
TEST(LublinGeneratorTest, DistributionsMatchTheModel) {
  const Workload workload =
      GenerateLublin({.jobs = 50000, .procs = 128, .load = 0.7, .seed = 2024});
  const double n = static_cast<double>(workload.jobs.size());
  double serial = 0;
  double power_of_two = 0;
  double short_jobs = 0;  // runtime < 15 min
  double long_jobs = 0;   // runtime > 4 h
  std::vector<double> log_runtimes;
  for (const WorkloadJob& job : workload.jobs) {
    const int32_t size = job.spec.max_tasks;
    if (size == 1) ++serial;
    if (size > 1 && (size & (size - 1)) == 0) ++power_of_two;
    if (job.runtime < 900) ++short_jobs;
    if (job.runtime > 4 * 3600) ++long_jobs;
    log_runtimes.push_back(std::log(static_cast<double>(job.runtime)));
  }
  // P(size 1) = 0.2927. Powers of two: 0.6686 of jobs by rounding, plus unrounded draws that
  // land on one.
  EXPECT_NEAR(serial / n, 0.2927, 0.01);
  EXPECT_GE(power_of_two / n, 0.6686 - 0.01);
  EXPECT_LE(power_of_two / n, 0.6686 + 0.05);
  // ln(runtime) is a mixture of Gamma(6.57, 0.823) (mean 5.41, i.e. ~4 min) with weight
  // p = 0.6986 - 0.003 * size, and Gamma(639.1, 0.0156) (mean 9.97, i.e. ~6 h). The mean
  // size is about 13, so p is about 0.66 and the mean of ln(runtime) about
  // 0.66 * 5.41 + 0.34 * 9.97 = 6.96. Short jobs come almost only from the first gamma
  // (P(ln r < 6.8) ~ 0.73 there), long ones mostly from the second (P(ln r > 9.68) ~ 0.77).
  double mean = 0;
  for (double x : log_runtimes) mean += x / n;
  EXPECT_NEAR(mean, 6.96, 0.3);
  EXPECT_GT(short_jobs / n, 0.38);
  EXPECT_LT(short_jobs / n, 0.58);
  EXPECT_GT(long_jobs / n, 0.2);
  EXPECT_LT(long_jobs / n, 0.4);
}

// More arrivals around midday than at night (the daily cycle).
TEST(LublinGeneratorTest, DailyCycle) {
  const Workload workload = GenerateLublin({.jobs = 20000, .procs = 128, .load = 0.7, .seed = 9});
  int64_t day = 0;
  int64_t night = 0;
  for (const WorkloadJob& job : workload.jobs) {
    const int64_t hour = job.spec.submit_time % 86400 / 3600;
    if (hour >= 10 && hour < 16) ++day;
    if (hour >= 0 && hour < 6) ++night;
  }
  EXPECT_GT(day, 2 * night) << "day " << day << " night " << night;
}

TEST(LublinGeneratorTest, TinyWorkloads) {
  EXPECT_TRUE(GenerateLublin({.jobs = 0}).jobs.empty());
  const Workload one = GenerateLublin({.jobs = 1});
  ASSERT_EQ(one.jobs.size(), 1u);
  EXPECT_EQ(one.jobs[0].spec.id, 1);
  EXPECT_EQ(one.jobs[0].spec.submit_time, 0);
}

TEST(LublinGeneratorTest, RunLimitsAreRoundValues) {
  const std::set<int64_t> round = {60,   300,   600,   900,   1800,  3600,
                                   7200, 14400, 28800, 43200, 86400, 172800};
  for (const WorkloadJob& job : GenerateLublin({.jobs = 2000, .seed = 5}).jobs) {
    ASSERT_TRUE(round.contains(*job.spec.run_limit)) << *job.spec.run_limit;
  }
}

// Runs the built `sluice` binary; returns its exit code and stdout.
int RunSluice(const std::string& args, std::string& out) {
  const std::string command =
      std::string(sluice::testing::SluiceBinary()) + " " + args + " 2>/dev/null";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(LublinGeneratorTest, GenCommand) {
  struct Case {
    std::string_view name;
    std::string args;
    int want_exit;
    std::string want_out;
  };
  const LublinOptions defaults;
  const LublinOptions custom{.jobs = 200, .procs = 64, .load = 0.85, .seed = 77};
  const std::vector<Case> cases = {
      {"defaults", "gen", 0, WriteJsonl(GenerateLublin(defaults))},
      {"all flags", "gen --jobs 200 --procs 64 --load 0.85 --seed 77 --format jsonl", 0,
       WriteJsonl(GenerateLublin(custom))},
      {"swf", "gen --jobs 200 --procs 64 --load 0.85 --seed 77 --format swf", 0,
       WriteSwf(GenerateLublin(custom))},
      {"bad procs", "gen --procs 0", 2, ""},
      {"bad jobs", "gen --jobs -1", 2, ""},
      {"bad load", "gen --load 0", 2, ""},
      {"bad format", "gen --format csv", 2, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string out;
    EXPECT_EQ(RunSluice(c.args, out), c.want_exit);
    EXPECT_TRUE(out == c.want_out) << "output differs; first bytes: " << out.substr(0, 200);
  }
}

TEST(LublinGeneratorTest, GenCommandWritesAFile) {
  const std::string path = ::testing::TempDir() + "/gen.swf";
  std::string out;
  ASSERT_EQ(RunSluice("gen --jobs 50 --seed 3 --format swf -o " + path, out), 0);
  EXPECT_EQ(out, "");
  std::FILE* file = std::fopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  std::string text;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
  std::fclose(file);
  EXPECT_EQ(text, WriteSwf(GenerateLublin({.jobs = 50, .seed = 3})));
}

}  // namespace
}  // namespace sluice::sim
