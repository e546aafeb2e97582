// Golden tests of `sluice sim` on real SWF traces (R-SIM-1b..1e, R-SIM-2, R-SIM-4).
//
// Each case replays the first 2,000 jobs of a Parallel Workloads Archive trace under one
// policy, as a subprocess of the real binary, and checks three things:
//   1. the `--json` metrics equal tests/golden/traces/<case>/expected.metrics.json on the keys
//      of R-SIM-4 (relative tolerance 1e-9);
//   2. the `--decisions` file equals expected.decisions.jsonl byte for byte;
//   3. independently of any checked-in file, every job's start time and the metrics agree
//      with tests/testing/reference_sim, a naive model written from SPEC.md alone.
// `SLUICE_UPDATE_GOLDEN=1` rewrites the expected files instead of comparing them, but only
// when check 3 passes: a golden file must never record a schedule the reference disputes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "testing/build_paths.h"
#include "testing/reference_sim.h"
#include "testing/subprocess.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
namespace ref = reference_sim;
using testing::FirstDifference;
using testing::ReadFile;
using testing::TempDir;
using testing::UpdateGolden;
using testing::WriteFile;
using Json = nlohmann::json;

constexpr int kMaxJobs = 2000;
constexpr auto kSubprocessTimeout = std::chrono::seconds(300);
constexpr std::string_view kMetricKeys[] = {"jobs",     "skipped",     "avg_wait", "max_wait",
                                            "avg_bsld", "utilization", "makespan"};

struct TraceCase {
  std::string_view name;  // directory under tests/golden/traces/
  std::string_view trace;
  std::string_view policy;  // `--policy`
  ref::Policy reference_policy;
  std::string_view description;
};

const TraceCase kCases[] = {
    {"kth_sp2_fifo", "KTH-SP2-1996-2.1-cln.swf.gz", "fifo", ref::Policy::kFcfs,
     "KTH SP2 (100 procs), first 2000 jobs, fifo: strict FCFS on one-slot hosts."},
    {"kth_sp2_easy_backfill", "KTH-SP2-1996-2.1-cln.swf.gz", "easy_backfill", ref::Policy::kEasy,
     "KTH SP2 (100 procs), first 2000 jobs, easy_backfill: textbook EASY (R-SIM-1e)."},
    {"sdsc_sp2_fifo", "SDSC-SP2-1998-4.2-cln.swf.gz", "fifo", ref::Policy::kFcfs,
     "SDSC SP2 (128 procs), first 2000 jobs, fifo; the 5671 cancelled (runtime -1) are skipped."},
    {"sdsc_sp2_easy_backfill", "SDSC-SP2-1998-4.2-cln.swf.gz", "easy_backfill", ref::Policy::kEasy,
     "SDSC SP2 (128 procs), first 2000 jobs, easy_backfill; 131 overrun their estimate, unkilled."},
};

// Names the case in gtest output instead of dumping its bytes.
void PrintTo(const TraceCase& c, std::ostream* os) { *os << c.name; }

fs::path TracePath(const TraceCase& c) {
  return fs::path(testing::SourceDir()) / ".." / "shared" / "traces" / std::string(c.trace);
}

fs::path CaseDir(const TraceCase& c) {
  return fs::path(testing::SourceDir()) / "tests" / "golden" / "traces" / std::string(c.name);
}

struct SimRun {
  std::string error;  // empty on success
  std::string stdout_text;
  std::string decisions;
};

// Runs `sluice sim` on the case, stdout and stderr to files in `dir`, killed after a bound.
SimRun RunSluice(const TraceCase& c, const fs::path& dir) {
  SimRun run;
  const fs::path decisions = dir / "decisions.jsonl";
  testing::ProcessResult process =
      testing::RunProcess({testing::SluiceBinary(), "sim", "--trace", TracePath(c).string(),
                           "--max-jobs", std::to_string(kMaxJobs), "--policy",
                           std::string(c.policy), "--json", "--decisions", decisions.string()},
                          dir, kSubprocessTimeout);
  if (!process.error.empty() || process.exit_code != 0) {
    run.error = process.error.empty()
                    ? "sluice sim failed (exit " + std::to_string(process.exit_code) +
                          "): " + process.stderr_text
                    : process.error;
    return run;
  }
  run.stdout_text = process.stdout_text;
  std::optional<std::string> written = ReadFile(decisions);
  if (!written) run.error = "sluice sim wrote no decisions file";
  run.decisions = written.value_or("");
  return run;
}

bool NearlyEqual(double a, double b) {
  return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

// The R-SIM-4 keys of a metrics object, or the first problem found.
std::optional<std::map<std::string, double>> MetricSubset(const Json& object, std::string* error) {
  if (!object.is_object()) {
    *error = "metrics are not a JSON object";
    return std::nullopt;
  }
  std::map<std::string, double> subset;
  for (std::string_view key : kMetricKeys) {
    auto it = object.find(std::string(key));
    if (it == object.end() || !it->is_number()) {
      *error = "metrics lack numeric key " + std::string(key);
      return std::nullopt;
    }
    subset[std::string(key)] = it->get<double>();
  }
  return subset;
}

std::map<std::string, double> ReferenceMetrics(const ref::Metrics& m) {
  return {{"jobs", static_cast<double>(m.jobs)},
          {"skipped", static_cast<double>(m.skipped)},
          {"avg_wait", m.avg_wait},
          {"max_wait", m.max_wait},
          {"avg_bsld", m.avg_bsld},
          {"utilization", m.utilization},
          {"makespan", m.makespan}};
}

void ExpectMetricsEqual(const std::map<std::string, double>& want,
                        const std::map<std::string, double>& got, std::string_view what) {
  for (const auto& [key, value] : want) {
    EXPECT_TRUE(NearlyEqual(value, got.at(key)))
        << what << ": " << key << " expected " << Json(value).dump() << ", sluice has "
        << Json(got.at(key)).dump();
  }
}

// One line of the decisions file (R-SIM-4).
struct Decision {
  int64_t t = 0;
  int64_t job = 0;
  std::string event;
  int64_t slots = 0;  // sum over `hosts`
  std::string line;
};

std::vector<Decision> ParseDecisions(const std::string& text, std::string* error) {
  std::vector<Decision> decisions;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty()) continue;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("t") || !j.contains("job") ||
        !j.contains("event") || !j["t"].is_number_integer() || !j["job"].is_number_integer() ||
        !j["event"].is_string()) {
      *error = "decisions line " + std::to_string(number) + " is malformed: " + line;
      return {};
    }
    Decision d{.t = j["t"].get<int64_t>(),
               .job = j["job"].get<int64_t>(),
               .event = j["event"].get<std::string>(),
               .slots = 0,
               .line = line};
    if (j.contains("hosts") && j["hosts"].is_object()) {
      for (const auto& [host, count] : j["hosts"].items()) {
        if (count.is_number_integer()) d.slots += count.get<int64_t>();
      }
    }
    decisions.push_back(std::move(d));
  }
  return decisions;
}

// What the reference saw in the cycles at time `t`, for explaining a disagreement.
std::string DescribeReferenceAt(const ref::Workload& workload, ref::Policy policy, Instant t) {
  std::ostringstream out;
  ref::Simulate(
      workload, policy, {.on_cycle = [&](const ref::CycleTrace& c) {
        if (c.now != t) return;
        out << "  reference cycle at t=" << c.now << ": free=" << c.free_before << " of "
            << workload.procs << "\n    queue (id:procs/estimate):";
        for (int64_t id : c.queue_before) {
          for (const ref::Job& j : workload.jobs) {
            if (j.id == id) out << " " << id << ":" << j.procs << "/" << j.estimate;
          }
        }
        out << "\n    running (id:procs start->expected end):";
        for (const ref::RunningJob& r : c.running_before) {
          out << " " << r.id << ":" << r.procs << " " << r.start << "->" << r.expected_end;
        }
        if (c.shadow_computed) {
          out << "\n    head " << c.head << " blocked: S=" << c.shadow << " extra=" << c.extra;
        }
        out << "\n    started:";
        for (int64_t id : c.started) out << " " << id;
        out << "\n";
      }});
  return out.str();
}

std::string SluiceStartsAt(const std::vector<Decision>& decisions, Instant t) {
  std::string ids;
  for (const Decision& d : decisions) {
    if (d.t == t && d.event == "start") ids += " " + std::to_string(d.job);
  }
  return ids + "\n";
}

// Check 3: sluice's decisions and metrics against the reference; disagreements are failures.
void CrossCheck(const TraceCase& c, const std::vector<Decision>& decisions,
                const std::map<std::string, double>& sluice_metrics) {
  ref::SwfOptions options{.procs = 0, .max_jobs = kMaxJobs};
  Result<ref::Workload> workload = ref::LoadSwf(TracePath(c).string(), options);
  ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
  ref::Outcome outcome = ref::Simulate(*workload, c.reference_policy);

  // 1. Index sluice's start and finish lines by job id; anything else is unexpected here.
  std::map<int64_t, const Decision*> starts;
  std::map<int64_t, const Decision*> finishes;
  for (const Decision& d : decisions) {
    if (d.event != "start" && d.event != "finish") {
      ADD_FAILURE() << "unexpected event: " << d.line;
      continue;
    }
    auto& index = d.event == "start" ? starts : finishes;
    EXPECT_TRUE(index.emplace(d.job, &d).second) << "second " << d.event << ": " << d.line;
  }

  // 2. Every reference job: same start time, its processor count, finish = start + runtime.
  struct Mismatch {
    Instant when;
    size_t index;
  };
  std::optional<Mismatch> first;
  int mismatches = 0;
  for (size_t i = 0; i < workload->jobs.size(); ++i) {
    const ref::Job& job = workload->jobs[i];
    const Instant want = outcome.start[i];
    auto s = starts.find(job.id);
    if (s == starts.end() || s->second->t != want) {
      ++mismatches;
      Instant when = s == starts.end() ? want : std::min(want, s->second->t);
      if (!first || when < first->when) first = Mismatch{when, i};
      continue;
    }
    EXPECT_EQ(s->second->slots, job.procs) << s->second->line;
    auto f = finishes.find(job.id);
    if (f != finishes.end()) {
      EXPECT_EQ(f->second->t, want + job.runtime) << f->second->line;
    }
  }
  EXPECT_EQ(starts.size(), workload->jobs.size()) << "sluice started jobs the reference lacks";
  if (first) {
    const ref::Job& job = workload->jobs[first->index];
    auto s = starts.find(job.id);
    ADD_FAILURE() << mismatches << " start times differ from the reference; the first is job "
                  << job.id << " (submit " << job.submit << ", procs " << job.procs << ", runtime "
                  << job.runtime << ", estimate " << job.estimate << "): reference starts it at "
                  << outcome.start[first->index] << ", sluice "
                  << (s == starts.end() ? std::string("never") : std::to_string(s->second->t))
                  << "\n"
                  << DescribeReferenceAt(*workload, c.reference_policy, first->when)
                  << "  sluice started at t=" << first->when << ":"
                  << SluiceStartsAt(decisions, first->when);
  }

  // 3. Metrics.
  ExpectMetricsEqual(ReferenceMetrics(outcome.metrics), sluice_metrics, "reference");
}

// Check 2 helper: the first differing line, so a golden diff is readable in the test log.
class TraceGoldenTest : public ::testing::TestWithParam<TraceCase> {};

TEST_P(TraceGoldenTest, MatchesGoldenFilesAndReference) {
  const TraceCase& c = GetParam();
  if (!fs::exists(TracePath(c))) GTEST_SKIP() << "no trace at " << TracePath(c);
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  SimRun run = RunSluice(c, dir.path());
  ASSERT_EQ(run.error, "");

  Json metrics_json = Json::parse(run.stdout_text, nullptr, /*allow_exceptions=*/false);
  std::string error;
  std::optional<std::map<std::string, double>> metrics = MetricSubset(metrics_json, &error);
  ASSERT_TRUE(metrics.has_value()) << error << "; stdout: " << run.stdout_text;
  std::vector<Decision> decisions = ParseDecisions(run.decisions, &error);
  ASSERT_EQ(error, "");

  CrossCheck(c, decisions, *metrics);
  const bool agrees = !HasFailure();  // nothing failed before the cross-check

  const fs::path case_dir = CaseDir(c);
  if (UpdateGolden()) {
    ASSERT_TRUE(agrees) << "not updating " << case_dir << ": sluice disagrees with the reference";
    Json expected = Json::object();
    for (const auto& [key, value] : *metrics) expected[key] = metrics_json[key];
    fs::create_directories(case_dir);
    ASSERT_TRUE(WriteFile(case_dir / "expected.metrics.json", expected.dump(2) + "\n"));
    ASSERT_TRUE(WriteFile(case_dir / "expected.decisions.jsonl", run.decisions));
    ASSERT_TRUE(WriteFile(case_dir / "description.txt", std::string(c.description) + "\n"));
    return;
  }

  std::optional<std::string> expected_metrics = ReadFile(case_dir / "expected.metrics.json");
  ASSERT_TRUE(expected_metrics.has_value()) << "missing; run with SLUICE_UPDATE_GOLDEN=1";
  Json expected_json = Json::parse(*expected_metrics, nullptr, /*allow_exceptions=*/false);
  std::optional<std::map<std::string, double>> expected = MetricSubset(expected_json, &error);
  ASSERT_TRUE(expected.has_value()) << error;
  ExpectMetricsEqual(*expected, *metrics, "expected.metrics.json");

  std::optional<std::string> expected_decisions = ReadFile(case_dir / "expected.decisions.jsonl");
  ASSERT_TRUE(expected_decisions.has_value()) << "missing; run with SLUICE_UPDATE_GOLDEN=1";
  EXPECT_TRUE(*expected_decisions == run.decisions)
      << "decisions differ from expected.decisions.jsonl: "
      << FirstDifference(*expected_decisions, run.decisions);
}

TEST_P(TraceGoldenTest, SameCommandTwiceGivesIdenticalBytes) {
  const TraceCase& c = GetParam();
  if (!fs::exists(TracePath(c))) GTEST_SKIP() << "no trace at " << TracePath(c);
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  SimRun first = RunSluice(c, dir.path());
  ASSERT_EQ(first.error, "");
  SimRun second = RunSluice(c, dir.path());
  ASSERT_EQ(second.error, "");
  EXPECT_TRUE(first.stdout_text == second.stdout_text)
      << "stdout differs: " << FirstDifference(first.stdout_text, second.stdout_text);
  EXPECT_TRUE(first.decisions == second.decisions)
      << "decisions differ: " << FirstDifference(first.decisions, second.decisions);
}

INSTANTIATE_TEST_SUITE_P(TraceGolden, TraceGoldenTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<TraceCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

}  // namespace
}  // namespace sluice
