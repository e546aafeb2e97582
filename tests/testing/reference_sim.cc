// Reference simulator; see reference_sim.h. Written from SPEC.md §9 only.
#include "testing/reference_sim.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "base/check.h"

namespace sluice::reference_sim {
namespace {

// A data line with every field numeric, before the R-SIM-1c filters.
struct Row {
  double submit = 0;
  double runtime = 0;
  double alloc_procs = 0;
  double req_procs = 0;
  double req_time = 0;
  double id = 0;
};

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) fields.push_back(line.substr(i, j - i));
    i = j;
  }
  return fields;
}

// The whole token must be a finite number ("-1", "3600", "2.5").
std::optional<double> ParseNumber(std::string_view token) {
  std::string text(token);
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// For a header comment `; Key: 128 ...`, the leading integer after the colon; else nullopt.
std::optional<int64_t> HeaderValue(std::string_view comment, std::string_view key) {
  std::string_view s = TrimLeft(comment);
  if (s.substr(0, key.size()) != key) return std::nullopt;
  s.remove_prefix(key.size());
  s = TrimLeft(s);
  if (s.empty() || s.front() != ':') return std::nullopt;
  s = TrimLeft(s.substr(1));
  int64_t value = 0;
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') {
    value = value * 10 + (s[digits] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return value;
}

// Whole seconds and counts: SWF values are integers; anything fractional is truncated.
int64_t Whole(double value) { return static_cast<int64_t>(value); }

}  // namespace

Result<Workload> ParseSwf(std::string_view text, const SwfOptions& options) {
  // 1. Split lines; comments may carry MaxProcs/MaxNodes; data lines need >= 9 numbers.
  std::optional<int64_t> max_procs;
  std::optional<int64_t> max_nodes;
  std::vector<Row> rows;
  Workload workload;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = TrimLeft(line);
    if (line.empty()) continue;  // a blank line is no data line
    if (line.front() == ';') {
      line.remove_prefix(1);
      if (!max_procs) max_procs = HeaderValue(line, "MaxProcs");
      if (!max_nodes) max_nodes = HeaderValue(line, "MaxNodes");
      continue;
    }
    std::vector<std::string_view> fields = SplitFields(line);
    std::vector<double> numbers;
    for (std::string_view field : fields) {
      std::optional<double> number = ParseNumber(field);
      if (!number) break;
      numbers.push_back(*number);
    }
    if (fields.size() < 9 || numbers.size() != fields.size()) {
      ++workload.skipped;
      continue;
    }
    rows.push_back(Row{.submit = numbers[1],
                       .runtime = numbers[3],
                       .alloc_procs = numbers[4],
                       .req_procs = numbers[7],
                       .req_time = numbers[8],
                       .id = numbers[0]});
  }

  // 2. Machine size: the option, else MaxProcs if > 0, else MaxNodes.
  if (options.procs > 0) {
    workload.procs = options.procs;
  } else if (max_procs && *max_procs > 0) {
    workload.procs = *max_procs;
  } else if (max_nodes && *max_nodes > 0) {
    workload.procs = *max_nodes;
  } else {
    return InvalidArgument("swf: no machine size (no --procs, MaxProcs or MaxNodes)");
  }

  // 3. Field rules and filters.
  for (const Row& row : rows) {
    Job job{.id = Whole(row.id),
            .submit = Whole(row.submit),
            .runtime = Whole(row.runtime),
            .procs = row.req_procs > 0 ? Whole(row.req_procs) : Whole(row.alloc_procs),
            .estimate = 0};
    job.estimate = row.req_time > 0 ? Whole(row.req_time) : job.runtime;
    if (job.runtime < 0 || job.procs <= 0 || job.procs > workload.procs || job.submit < 0) {
      ++workload.skipped;
      continue;
    }
    workload.jobs.push_back(job);
  }

  // 4. Stable sort by submit time, then keep the first N.
  std::stable_sort(workload.jobs.begin(), workload.jobs.end(),
                   [](const Job& a, const Job& b) { return a.submit < b.submit; });
  if (options.max_jobs >= 0 && workload.jobs.size() > static_cast<size_t>(options.max_jobs)) {
    workload.jobs.resize(static_cast<size_t>(options.max_jobs));
  }
  return workload;
}

Result<Workload> LoadSwf(const std::string& path, const SwfOptions& options) {
  // gzopen reads uncompressed files transparently.
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return NotFound("swf: cannot open " + path);
  std::string text;
  std::vector<char> buffer(1 << 16);
  while (true) {
    int n = gzread(file, buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) {
      gzclose(file);
      return InvalidArgument("swf: read error in " + path);
    }
    if (n == 0) break;
    text.append(buffer.data(), static_cast<size_t>(n));
  }
  gzclose(file);
  return ParseSwf(text, options);
}

namespace {

struct Running {
  size_t job = 0;  // index into workload.jobs
  Instant start = 0;
  Instant end = 0;    // start + runtime: the truth
  int64_t order = 0;  // start order, the tie-break of the shadow computation
};

// The machine and its queue while a simulation runs.
struct State {
  const Workload* workload = nullptr;
  int64_t free = 0;
  std::vector<size_t> queue;  // pending job indices, queue (= submission) order
  std::vector<Running> running;
  std::vector<Instant> start;
  int64_t next_order = 0;

  const Job& job(size_t index) const { return workload->jobs[index]; }

  void Start(size_t index, Instant now, CycleTrace& trace) {
    const Job& j = job(index);
    SLUICE_CHECK(j.procs <= free);
    free -= j.procs;
    running.push_back(
        Running{.job = index, .start = now, .end = now + j.runtime, .order = next_order++});
    start[index] = now;
    trace.started.push_back(j.id);
  }

  // Returns the processors of every job ending at `now` to the free pool; true if any ended.
  // REQUIRES: no running job ends before `now`.
  bool ReleaseFinished(Instant now) {
    bool any = false;
    for (size_t i = 0; i < running.size();) {
      SLUICE_CHECK(running[i].end >= now);
      if (running[i].end == now) {
        free += job(running[i].job).procs;
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        any = true;
      } else {
        ++i;
      }
    }
    SLUICE_CHECK(free <= workload->procs);
    return any;
  }

  // Running jobs by (expected end, start order), expected end = max(start + estimate, now).
  std::vector<RunningJob> SortedRunning(Instant now) const {
    std::vector<std::pair<int64_t, RunningJob>> keyed;
    for (const Running& r : running) {
      const Job& j = job(r.job);
      keyed.push_back({r.order, RunningJob{.id = j.id,
                                           .procs = j.procs,
                                           .start = r.start,
                                           .expected_end = std::max(r.start + j.estimate, now)}});
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
      if (a.second.expected_end != b.second.expected_end) {
        return a.second.expected_end < b.second.expected_end;
      }
      return a.first < b.first;
    });
    std::vector<RunningJob> sorted;
    for (const auto& [order, r] : keyed) sorted.push_back(r);
    return sorted;
  }
};

// One scheduling cycle at `now` (R-ADM-2 fifo; R-SIM-1e easy_backfill).
void RunCycle(State& state, Policy policy, Instant now, const SimOptions& options) {
  CycleTrace trace;
  trace.now = now;
  trace.free_before = state.free;
  if (options.on_cycle) {  // only describe the state when someone listens
    for (size_t index : state.queue) trace.queue_before.push_back(state.job(index).id);
    trace.running_before = state.SortedRunning(now);
  }

  // 1. Start jobs from the head, in order, while the head fits.
  size_t head = 0;
  while (head < state.queue.size() && state.job(state.queue[head]).procs <= state.free) {
    state.Start(state.queue[head], now, trace);
    ++head;
  }
  state.queue.erase(state.queue.begin(), state.queue.begin() + static_cast<std::ptrdiff_t>(head));

  if (policy == Policy::kEasy && !state.queue.empty()) {
    // 2. The head does not fit: shadow time S and `extra`, once, by accumulating free
    //    processors along the running jobs in (expected end, start order).
    const Job& blocked = state.job(state.queue.front());
    int64_t accumulated = state.free;
    bool found = false;
    for (const RunningJob& r : state.SortedRunning(now)) {
      accumulated += r.procs;
      if (accumulated >= blocked.procs) {
        trace.shadow = r.expected_end;
        trace.extra = accumulated - blocked.procs;
        found = true;
        break;
      }
    }
    SLUICE_CHECK(found);  // procs <= P, so the head fits once everything has ended
    trace.shadow_computed = true;
    trace.head = blocked.id;

    // 3. Scan the rest of the queue in order; a job that fits now starts if it ends by S
    //    (by its estimate), or else if it fits in `extra`, which then shrinks.
    int64_t extra = trace.extra;
    std::vector<size_t> still_pending = {state.queue.front()};
    for (size_t k = 1; k < state.queue.size(); ++k) {
      size_t index = state.queue[k];
      const Job& j = state.job(index);
      bool fits = j.procs <= state.free;
      if (fits && now + j.estimate <= trace.shadow) {
        state.Start(index, now, trace);
      } else if (fits && j.procs <= extra) {
        extra -= j.procs;
        state.Start(index, now, trace);
      } else {
        still_pending.push_back(index);
      }
    }
    state.queue = std::move(still_pending);
  }
  if (options.on_cycle) options.on_cycle(trace);
}

}  // namespace

Outcome Simulate(const Workload& workload, Policy policy, const SimOptions& options) {
  const std::vector<Job>& jobs = workload.jobs;
  State state;
  state.workload = &workload;
  state.free = workload.procs;
  state.start.assign(jobs.size(), -1);
  size_t next_submit = 0;
  while (next_submit < jobs.size() || !state.running.empty()) {
    // 1. The next timestamp: the earliest pending submission or running job's end.
    Instant now = kInfinite;
    if (next_submit < jobs.size()) now = jobs[next_submit].submit;
    for (const Running& r : state.running) now = std::min(now, r.end);
    // 2. Finishes first, then submissions in order (R-SIM-1b).
    state.ReleaseFinished(now);
    while (next_submit < jobs.size() && jobs[next_submit].submit == now) {
      SLUICE_CHECK(jobs[next_submit].procs > 0 && jobs[next_submit].procs <= workload.procs);
      state.queue.push_back(next_submit++);
    }
    // 3. One cycle; zero-runtime jobs it started finish now, after it, and another cycle runs
    //    at the same time (R-SIM-1d).
    do {
      RunCycle(state, policy, now, options);
    } while (state.ReleaseFinished(now));
  }
  SLUICE_CHECK(state.queue.empty());
  return Outcome{.start = state.start, .metrics = ComputeMetrics(workload, state.start)};
}

Metrics ComputeMetrics(const Workload& workload, const std::vector<Instant>& start) {
  Metrics m;
  m.jobs = static_cast<int64_t>(workload.jobs.size());
  m.skipped = workload.skipped;
  if (workload.jobs.empty()) return m;
  SLUICE_CHECK(start.size() == workload.jobs.size());
  int64_t wait_sum = 0;
  int64_t max_wait = 0;
  double bsld_sum = 0;
  int64_t area = 0;  // sum of runtime x procs
  Instant first_submit = kInfinite;
  Instant last_end = 0;
  for (size_t i = 0; i < workload.jobs.size(); ++i) {
    const Job& j = workload.jobs[i];
    Duration wait = start[i] - j.submit;
    SLUICE_CHECK(wait >= 0);
    wait_sum += wait;
    max_wait = std::max(max_wait, wait);
    // bounded slowdown = max(1, (wait + run) / max(run, 10))
    bsld_sum += std::max(1.0, static_cast<double>(wait + j.runtime) /
                                  static_cast<double>(std::max<Duration>(j.runtime, 10)));
    area += j.runtime * j.procs;
    first_submit = std::min(first_submit, j.submit);
    last_end = std::max(last_end, start[i] + j.runtime);
  }
  const double n = static_cast<double>(workload.jobs.size());
  m.avg_wait = static_cast<double>(wait_sum) / n;
  m.max_wait = static_cast<double>(max_wait);
  m.avg_bsld = bsld_sum / n;
  m.makespan = static_cast<double>(last_end - first_submit);
  // utilization = sum(runtime x procs) / (P x makespan)
  if (m.makespan > 0) {
    m.utilization = static_cast<double>(area) / (static_cast<double>(workload.procs) * m.makespan);
  }
  return m;
}

}  // namespace sluice::reference_sim
