#include "sim/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace sluice::sim {
namespace {

// Accumulates one group's waits.
struct WaitAccumulator {
  int64_t jobs = 0;
  std::vector<int64_t> waits;
  double bsld_sum = 0;

  void Add(const JobRecord& record) {
    ++jobs;
    if (record.start < 0) return;
    const int64_t wait = record.start - record.submit;
    const int64_t end = record.end >= 0 ? record.end : record.start;
    const double run = static_cast<double>(end - record.start);
    waits.push_back(wait);
    bsld_sum += std::max(1.0, (static_cast<double>(wait) + run) / std::max(run, 10.0));
  }

  WaitStats Finish() {
    WaitStats stats;
    stats.jobs = jobs;
    stats.started = static_cast<int64_t>(waits.size());
    if (waits.empty()) return stats;
    double sum = 0;
    for (int64_t w : waits) sum += static_cast<double>(w);
    stats.avg_wait = sum / static_cast<double>(waits.size());
    stats.avg_bsld = bsld_sum / static_cast<double>(waits.size());
    // Nearest-rank percentiles: only four order statistics are needed, so each is selected
    // in the part after the previous one (linear), not by sorting every wait.
    auto position = [&](double p) {
      size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(waits.size())));
      return std::clamp<size_t>(k, 1, waits.size()) - 1;
    };
    const size_t p50 = position(0.50);
    const size_t p95 = position(0.95);
    const size_t p99 = position(0.99);
    size_t from = 0;
    for (const size_t k : {p50, p95, p99, waits.size() - 1}) {
      if (k < from) continue;  // the same position as the previous one: in place already
      std::nth_element(waits.begin() + static_cast<std::ptrdiff_t>(from),
                       waits.begin() + static_cast<std::ptrdiff_t>(k), waits.end());
      from = k + 1;
    }
    stats.max_wait = waits.back();
    stats.p50_wait = waits[p50];
    stats.p95_wait = waits[p95];
    stats.p99_wait = waits[p99];
    return stats;
  }
};

// The entry of `map` named `name`, created when missing; the last one found is kept, so a
// run of records with the same name costs one string comparison each.
template <typename Value>
class GroupCache {
 public:
  explicit GroupCache(std::map<std::string, Value, std::less<>>& map) : map_(map) {}
  Value& Of(std::string_view name) {
    if (last_ == nullptr || name != last_name_) {
      auto it = map_.find(name);
      if (it == map_.end()) it = map_.emplace(std::string(name), Value{}).first;
      last_name_ = it->first;
      last_ = &it->second;
    }
    return *last_;
  }

 private:
  std::map<std::string, Value, std::less<>>& map_;
  std::string_view last_name_;  // the map's own key (map nodes do not move)
  Value* last_ = nullptr;
};

nlohmann::ordered_json GroupJson(const WaitStats& s) {
  nlohmann::ordered_json j;
  j["jobs"] = s.jobs;
  j["started"] = s.started;
  j["avg_wait"] = s.avg_wait;
  j["max_wait"] = s.max_wait;
  j["p50_wait"] = s.p50_wait;
  j["p95_wait"] = s.p95_wait;
  j["p99_wait"] = s.p99_wait;
  j["avg_bsld"] = s.avg_bsld;
  return j;
}

// The GPU metrics over the makespan (metrics.h), from the run's device-second integrals.
void SetGpuMetrics(const GpuTotals& gpus, Metrics& metrics) {
  metrics.total_gpus = gpus.devices;
  metrics.gpu_seconds = gpus.held_seconds;
  if (gpus.devices == 0 || metrics.makespan == 0) return;
  const double capacity = static_cast<double>(gpus.devices) * static_cast<double>(metrics.makespan);
  const double held = static_cast<double>(gpus.held_seconds);
  metrics.gpu_utilization = held / capacity;
  if (capacity > held) {
    metrics.gpu_fragmentation = static_cast<double>(gpus.stranded_seconds) / (capacity - held);
  }
}

}  // namespace

Metrics ComputeMetrics(const SimResult& result, int64_t total_slots, int64_t skipped) {
  Metrics metrics;
  metrics.skipped = skipped;
  metrics.total_slots = total_slots;
  metrics.cycles = result.cycles;
  WaitAccumulator all;
  std::map<std::string, WaitAccumulator, std::less<>> by_queue;
  std::map<std::string, WaitAccumulator, std::less<>> by_user;
  Instant first_submit = std::numeric_limits<Instant>::max();
  Instant last_end = std::numeric_limits<Instant>::min();
  double work = 0;
  std::map<std::string, double, std::less<>> work_by_queue;
  // A trace's records come in runs of one queue and often of one user: each group is looked
  // up when the name changes, not for every record.
  GroupCache<WaitAccumulator> queue_group(by_queue);
  GroupCache<WaitAccumulator> user_group(by_user);
  GroupCache<double> work_of_queue(work_by_queue);
  for (const JobRecord& record : result.records) {
    if (record.rejected) {
      ++metrics.rejected;
      continue;
    }
    if (record.is_array) continue;  // its elements are counted
    all.Add(record);
    const std::string_view queue =
        record.queue.empty() ? "default" : std::string_view(record.queue);
    queue_group.Of(queue).Add(record);
    user_group.Of(record.user.empty() ? "-" : std::string_view(record.user)).Add(record);
    first_submit = std::min(first_submit, record.submit);
    if (record.end >= 0) last_end = std::max(last_end, record.end);
    double run = record.work_lost;
    if (record.start >= 0 && record.end >= 0)
      run += static_cast<double>(record.end - record.start) * record.slots;
    work += run;
    work_of_queue.Of(queue) += run;
    metrics.preemptions += record.preemptions;
    metrics.work_lost += record.work_lost;
    if (record.preemptions > 0)
      metrics.preemptions_by_queue[std::string(queue)] += record.preemptions;
    if (record.cause == core::ExitCause::kUnschedulable) ++metrics.unschedulable;
    if (record.state == core::JobState::kCancelled) ++metrics.cancelled;
    if (record.start < 0 && record.end < 0) ++metrics.never_started;
    if (record.blocked_head) {
      ++metrics.blocked_heads;
      if (record.start >= 0) {
        metrics.max_head_wait = std::max(metrics.max_head_wait, record.start - record.submit);
      }
    }
    if (record.gate_since) ++metrics.gated_heads;
  }
  metrics.all = all.Finish();
  for (auto& [name, acc] : by_queue) metrics.by_queue[name] = acc.Finish();
  for (auto& [name, acc] : by_user) metrics.by_user[name] = acc.Finish();
  if (last_end > first_submit) {
    metrics.makespan = last_end - first_submit;
    if (total_slots > 0) {
      metrics.utilization =
          work / (static_cast<double>(total_slots) * static_cast<double>(metrics.makespan));
      for (const auto& [queue, queue_work] : work_by_queue) {
        metrics.utilization_by_queue[queue] =
            queue_work / (static_cast<double>(total_slots) * static_cast<double>(metrics.makespan));
      }
    }
  }
  SetGpuMetrics(result.gpus, metrics);
  return metrics;
}

std::string MetricsToJson(const Metrics& m) {
  nlohmann::ordered_json j;
  // R-SIM-4's keys first, then the rest of the wait statistics (the same as per group).
  j["jobs"] = m.all.jobs;
  j["skipped"] = m.skipped;
  j["avg_wait"] = m.all.avg_wait;
  j["max_wait"] = m.all.max_wait;
  j["avg_bsld"] = m.all.avg_bsld;
  j["utilization"] = m.utilization;
  j["makespan"] = m.makespan;
  const nlohmann::ordered_json all = GroupJson(m.all);  // named: items() refers into it
  for (const auto& [key, value] : all.items()) {
    if (!j.contains(key)) j[key] = value;
  }
  j["unschedulable"] = m.unschedulable;
  j["cancelled"] = m.cancelled;
  if (m.rejected > 0) j["rejected"] = m.rejected;
  j["never_started"] = m.never_started;
  j["blocked_heads"] = m.blocked_heads;
  j["max_head_wait"] = m.max_head_wait;
  j["gated_heads"] = m.gated_heads;
  if (m.preemptions > 0) {
    j["preemptions"] = m.preemptions;
    j["work_lost"] = m.work_lost;
  }
  j["total_slots"] = m.total_slots;
  if (m.total_gpus > 0) {  // absent without GPUs: outputs of GPU-less clusters stay as they were
    j["total_gpus"] = m.total_gpus;
    j["gpu_seconds"] = m.gpu_seconds;
    j["gpu_utilization"] = m.gpu_utilization;
    j["gpu_fragmentation"] = m.gpu_fragmentation;
  }
  j["cycles"] = m.cycles;
  nlohmann::ordered_json queues = nlohmann::ordered_json::object();
  for (const auto& [name, stats] : m.by_queue) {
    queues[name] = GroupJson(stats);
    if (auto u = m.utilization_by_queue.find(name); u != m.utilization_by_queue.end()) {
      queues[name]["utilization"] = u->second;
    }
    if (auto p = m.preemptions_by_queue.find(name); p != m.preemptions_by_queue.end()) {
      queues[name]["preemptions"] = p->second;
    }
  }
  j["queues"] = std::move(queues);
  nlohmann::ordered_json users = nlohmann::ordered_json::object();
  for (const auto& [name, stats] : m.by_user) users[name] = GroupJson(stats);
  j["users"] = std::move(users);
  return j.dump() + "\n";
}

std::string MetricsToTable(const Metrics& m, const std::string& title) {
  std::string out = title + "\n";
  auto row = [&](std::string_view name, const std::string& value) {
    out += fmt::format("  {:<22}{:>16}\n", name, value);
  };
  row("jobs", fmt::format("{}", m.all.jobs));
  row("skipped (load rules)", fmt::format("{}", m.skipped));
  row("started", fmt::format("{}", m.all.started));
  if (m.unschedulable > 0) row("unschedulable", fmt::format("{}", m.unschedulable));
  if (m.cancelled > 0) row("cancelled", fmt::format("{}", m.cancelled));
  if (m.rejected > 0) row("rejected (closed queue)", fmt::format("{}", m.rejected));
  if (m.never_started > 0) row("never started", fmt::format("{}", m.never_started));
  row("avg wait (s)", fmt::format("{:.1f}", m.all.avg_wait));
  row("p50 / p95 / p99 wait",
      fmt::format("{} / {} / {}", m.all.p50_wait, m.all.p95_wait, m.all.p99_wait));
  row("max wait (s)", fmt::format("{}", m.all.max_wait));
  row("max wait, blocked heads", fmt::format("{}", m.max_head_wait));
  if (m.gated_heads > 0) row("gated heads", fmt::format("{}", m.gated_heads));
  if (m.preemptions > 0) {
    row("preemptions", fmt::format("{}", m.preemptions));
    row("work lost (slot-s)", fmt::format("{:.0f}", m.work_lost));
  }
  row("avg bounded slowdown", fmt::format("{:.3f}", m.all.avg_bsld));
  row("utilization", fmt::format("{:.2f} %", 100 * m.utilization));
  if (m.total_gpus > 0) {
    row("GPUs", fmt::format("{}", m.total_gpus));
    row("GPU utilization", fmt::format("{:.2f} %", 100 * m.gpu_utilization));
    row("GPU fragmentation", fmt::format("{:.2f} %", 100 * m.gpu_fragmentation));
    row("GPU seconds", fmt::format("{}", m.gpu_seconds));
  }
  row("makespan (s)", fmt::format("{}", m.makespan));
  row("cycles", fmt::format("{}", m.cycles));
  if (m.by_queue.size() > 1) {
    out += "  per queue:\n";
    for (const auto& [name, s] : m.by_queue) {
      auto u = m.utilization_by_queue.find(name);
      out += fmt::format(
          "    {:<14} jobs {:>8}  avg wait {:>10.1f} s  max wait {:>8} s  bsld {:.3f}  util {:.1f} "
          "%\n",
          name, s.jobs, s.avg_wait, s.max_wait, s.avg_bsld,
          u == m.utilization_by_queue.end() ? 0.0 : 100 * u->second);
    }
  }
  return out;
}

}  // namespace sluice::sim
