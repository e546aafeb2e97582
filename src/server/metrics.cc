#include "server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>

#include "base/check.h"
#include "core/admission/diagnostics.h"
#include "server/capacity_metrics.h"
#include "server/controller.h"
#include "server/job_state.h"
#include "store/history.h"

namespace sluice::server {

namespace {

using PromLabels = std::map<std::string, std::string>;

PromLabels ToMap(const PromWriter::Labels& labels) {
  return PromLabels(labels.begin(), labels.end());
}

enum class Kind { kGauge, kCounter, kHistogram };

prometheus::MetricType TypeOf(Kind kind) {
  switch (kind) {
    case Kind::kCounter:
      return prometheus::MetricType::Counter;
    case Kind::kHistogram:
      return prometheus::MetricType::Histogram;
    case Kind::kGauge:
      break;
  }
  return prometheus::MetricType::Gauge;
}

// A histogram's samples as the caller wrote them, turned into one observation at the end.
struct HistogramSamples {
  std::vector<double> bounds;      // finite `le` bounds, ascending
  std::vector<double> cumulative;  // count up to each bound
  double sum = 0;
  double count = 0;
};

struct FamilyState {
  std::string name;
  std::string help;
  Kind kind = Kind::kGauge;
  prometheus::Family<prometheus::Gauge>* gauges = nullptr;
  prometheus::Family<prometheus::Counter>* counters = nullptr;
  prometheus::Family<prometheus::Histogram>* histograms = nullptr;
  std::vector<std::string> label_order;  // label names in the order first written
  std::map<PromLabels, size_t> sample_order;
  std::map<PromLabels, HistogramSamples> histogram_samples;  // labels without `le`

  size_t Note(const PromWriter::Labels& labels) {
    for (const auto& [label, value] : labels) {
      if (std::find(label_order.begin(), label_order.end(), label) == label_order.end()) {
        label_order.push_back(label);
      }
    }
    return sample_order.emplace(ToMap(labels), sample_order.size()).first->second;
  }
};

// The label order of the caller and the sample order: prometheus-cpp sorts labels by name and
// keeps samples in a hash map.
void RestoreOrder(const FamilyState& family, prometheus::MetricFamily& collected) {
  auto rank = [&](const prometheus::ClientMetric& metric) {
    PromLabels key;
    for (const auto& label : metric.label) key[label.name] = label.value;
    auto it = family.sample_order.find(key);
    return it == family.sample_order.end() ? family.sample_order.size() : it->second;
  };
  std::stable_sort(collected.metric.begin(), collected.metric.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  auto position = [&](const std::string& label) {
    return std::find(family.label_order.begin(), family.label_order.end(), label) -
           family.label_order.begin();
  };
  for (prometheus::ClientMetric& metric : collected.metric) {
    std::stable_sort(metric.label.begin(), metric.label.end(), [&](const auto& a, const auto& b) {
      return position(a.name) < position(b.name);
    });
  }
}

void AddHistogramSample(const std::string& suffix, const PromWriter::Labels& labels, double value,
                        FamilyState& family) {
  PromWriter::Labels rest;
  std::string le;
  for (const auto& [label, text] : labels) {
    if (label == "le") {
      le = text;
    } else {
      rest.push_back({label, text});
    }
  }
  family.Note(rest);
  HistogramSamples& samples = family.histogram_samples[ToMap(rest)];
  if (suffix == "_sum") {
    samples.sum = value;
  } else if (suffix == "_count") {
    samples.count = value;
  } else if (suffix == "_bucket" && le != "+Inf") {
    double bound = 0;
    auto [end, error] = std::from_chars(le.data(), le.data() + le.size(), bound);
    SLUICE_CHECK(error == std::errc() && end == le.data() + le.size());
    samples.bounds.push_back(bound);
    samples.cumulative.push_back(value);
  }
}

// One Observe of all the histogram's counts (prometheus-cpp takes per-bucket increments).
void ObserveHistograms(FamilyState& family, prometheus::Registry& registry) {
  family.histograms =
      &prometheus::BuildHistogram().Name(family.name).Help(family.help).Register(registry);
  for (const auto& [labels, samples] : family.histogram_samples) {
    prometheus::Histogram& histogram = family.histograms->Add(labels, samples.bounds);
    std::vector<double> increments;
    double below = 0;
    for (double cumulative : samples.cumulative) {
      increments.push_back(std::max(0.0, cumulative - below));
      below = std::max(below, cumulative);
    }
    increments.push_back(std::max(0.0, samples.count - below));
    histogram.ObserveMultiple(increments, samples.sum);
  }
}

}  // namespace

struct PromWriter::State {
  prometheus::Registry registry;
  std::vector<FamilyState> families;
};

PromWriter::PromWriter() : state_(std::make_unique<State>()) {}
PromWriter::~PromWriter() = default;

void PromWriter::Family(const std::string& name, const std::string& type, const std::string& help) {
  FamilyState& family = state_->families.emplace_back();
  family.name = name;
  family.help = help;
  if (type == "counter") {
    family.kind = Kind::kCounter;
    family.counters = &prometheus::BuildCounter().Name(name).Help(help).Register(state_->registry);
  } else if (type == "histogram") {
    family.kind = Kind::kHistogram;  // registered with its bounds, in text()
  } else {
    family.gauges = &prometheus::BuildGauge().Name(name).Help(help).Register(state_->registry);
  }
}

void PromWriter::Sample(const std::string& name, const Labels& labels, double value) {
  SLUICE_CHECK(!state_->families.empty());
  FamilyState& family = state_->families.back();
  SLUICE_CHECK(name.rfind(family.name, 0) == 0);
  switch (family.kind) {
    case Kind::kGauge:
      family.Note(labels);
      family.gauges->Add(ToMap(labels)).Set(value);
      break;
    case Kind::kCounter:
      family.Note(labels);
      family.counters->Add(ToMap(labels)).Increment(value);
      break;
    case Kind::kHistogram:
      AddHistogramSample(name.substr(family.name.size()), labels, value, family);
      break;
  }
}

std::string PromWriter::text() const {
  std::vector<prometheus::MetricFamily> collected;
  for (FamilyState& family : state_->families) {
    std::vector<prometheus::MetricFamily> one;
    if (family.kind == Kind::kHistogram) {
      if (family.histograms == nullptr) ObserveHistograms(family, state_->registry);
      one = family.histograms->Collect();
    } else if (family.kind == Kind::kCounter) {
      one = family.counters->Collect();
    } else {
      one = family.gauges->Collect();
    }
    if (one.empty()) {  // prometheus-cpp leaves out a family without samples; we show it
      one.push_back({.name = family.name, .help = family.help, .type = TypeOf(family.kind)});
    }
    for (prometheus::MetricFamily& f : one) {
      RestoreOrder(family, f);
      collected.push_back(std::move(f));
    }
  }
  return prometheus::TextSerializer().Serialize(collected);
}

namespace {

// Jobs that have not ended by (state, queue), jobs ended in this process by (state, queue) —
// every state of every queue, zeros included — and waiting jobs by (main reason, queue), from
// the counts the job book keeps (JobBook::counts: no walk over every job under the lock; an
// array's own record is not a job). Ended jobs are a counter: a gauge of them would fall as
// retention forgets them.
void WriteJobSeries(const JobCounts& counts, const JobBook& book, const core::ClusterState& state,
                    PromWriter& w) {
  std::map<std::pair<std::string, std::string>, int64_t> live;
  std::map<std::pair<std::string, std::string>, int64_t> ended = book.ended_totals();
  for (const core::Queue& q : state.topology().queues()) {
    for (JobState s : kAllJobStates) {
      (core::IsTerminal(s) ? ended : live).try_emplace({std::string(ToString(s)), q.spec.name}, 0);
    }
  }
  for (const auto& [key, n] : counts.by_state) {
    if (!store::IsEndedState(key.first)) live[key] = n;
  }
  w.Family("sluice_jobs", "gauge", "Jobs that have not ended, by state and queue.");
  for (const auto& [key, n] : live) {
    w.Sample("sluice_jobs", {{"state", key.first}, {"queue", key.second}}, static_cast<double>(n));
  }
  w.Family("sluice_jobs_ended_total", "counter",
           "Jobs ended (DONE, EXIT, CANCELLED) since this controller started, by queue.");
  for (const auto& [key, n] : ended) {
    w.Sample("sluice_jobs_ended_total", {{"state", key.first}, {"queue", key.second}},
             static_cast<double>(n));
  }
  w.Family("sluice_pending_reasons", "gauge", "Waiting jobs by main pending reason and queue.");
  for (const auto& [key, n] : counts.by_reason) {
    w.Sample("sluice_pending_reasons", {{"reason", key.first}, {"queue", key.second}},
             static_cast<double>(n));
  }
}

// One gauge or counter per queue from the core's counters.
void WriteQueueSeries(const std::vector<core::QueueCounters>& counters, const char* name,
                      const char* type, const char* help,
                      double (*value)(const core::QueueCounters&), PromWriter& w) {
  w.Family(name, type, help);
  for (const auto& c : counters) w.Sample(name, {{"queue", c.queue}}, value(c));
}

void WriteAdmissionCounters(const std::vector<core::QueueCounters>& counters, PromWriter& w) {
  WriteQueueSeries(
      counters, "sluice_oldest_pending_age_seconds", "gauge", "Age of the oldest waiting job.",
      [](const core::QueueCounters& c) { return double(c.oldest_pending_age); }, w);
  WriteQueueSeries(
      counters, "sluice_gated_heads", "gauge", "Queue heads whose aging gate is active.",
      [](const core::QueueCounters& c) { return double(c.gated_heads); }, w);
  WriteQueueSeries(
      counters, "sluice_unschedulable_total", "counter",
      "Jobs ended UNSCHEDULABLE or refused at submission (R-UX-2).",
      [](const core::QueueCounters& c) { return double(c.totals.unschedulable); }, w);
  w.Family("sluice_admission_attempts_total", "counter", "Admission attempts by outcome.");
  for (const auto& c : counters) {
    const std::pair<const char*, int64_t> outcomes[] = {
        {"admitted", c.totals.admitted},
        {"backfilled", c.totals.backfilled},
        {"temporarily_unavailable", c.totals.temporarily_unavailable},
        {"unschedulable", c.totals.unschedulable}};
    for (const auto& [outcome, n] : outcomes) {
      w.Sample("sluice_admission_attempts_total", {{"queue", c.queue}, {"outcome", outcome}},
               static_cast<double>(n));
    }
  }
  WriteQueueSeries(
      counters, "sluice_backfilled_admissions_total", "counter",
      "Jobs started ahead of a blocked head.",
      [](const core::QueueCounters& c) { return double(c.totals.backfilled); }, w);
}

void WriteCycleHistogram(const CycleTiming& timing, PromWriter& w) {
  w.Family("sluice_cycle_duration_seconds", "histogram", "Scheduling cycle duration.");
  for (size_t i = 0; i < std::size(kCycleBuckets); ++i) {
    char le[32];
    std::snprintf(le, sizeof le, "%g", kCycleBuckets[i]);
    w.Sample("sluice_cycle_duration_seconds_bucket", {{"le", le}},
             static_cast<double>(timing.buckets[i]));
  }
  w.Sample("sluice_cycle_duration_seconds_bucket", {{"le", "+Inf"}},
           static_cast<double>(timing.count));
  w.Sample("sluice_cycle_duration_seconds_sum", {}, timing.sum);
  w.Sample("sluice_cycle_duration_seconds_count", {}, static_cast<double>(timing.count));
}

// The slots configured on the hosts a queue may use (its host group, else every host).
int64_t QueueSlots(const core::Topology& topology, const core::Queue& q) {
  if (q.all_hosts) return topology.total_slots();
  int64_t slots = 0;
  for (auto h : q.hosts) slots += topology.hosts()[h].spec.slots;
  return slots;
}

void WriteQueueSlots(const core::ClusterState& state, PromWriter& w) {
  w.Family("sluice_slots", "gauge",
           "Slots by queue: configured on the hosts it may use (total), used by its jobs.");
  for (const core::Queue& q : state.topology().queues()) {
    w.Sample("sluice_slots", {{"queue", q.spec.name}, {"state", "total"}},
             static_cast<double>(QueueSlots(state.topology(), q)));
    w.Sample("sluice_slots", {{"queue", q.spec.name}, {"state", "used"}},
             static_cast<double>(q.used_slots));
  }
  w.Family("sluice_preemptions_total", "counter", "Jobs preempted.");
  for (const core::Queue& q : state.topology().queues()) {
    w.Sample("sluice_preemptions_total", {{"queue", q.spec.name}},
             static_cast<double>(q.totals.preempted));
  }
}

}  // namespace

std::pair<JobCounts, JobCounts> Controller::JobCountsKeptAndWalked() {
  std::lock_guard lock(ctx_.mu());
  return {book_.counts(), book_.CountAll()};
}

std::string Controller::Metrics() {
  PromWriter w;
  CapacitySnapshot capacity;
  {
    std::lock_guard lock(ctx_.mu());
    const JobCounts counts = book_.CountsWithElements();
    WriteJobSeries(counts, book_, ctx_.state(), w);
    std::vector<core::QueueCounters> counters = core::Counters(ctx_.state(), ctx_.Now());
    for (core::QueueCounters& c : counters) c.totals.unschedulable += refusals_.Count(c.queue);
    WriteAdmissionCounters(counters, w);
    WriteCycleHistogram(runner_.timing(), w);
    WriteQueueSlots(ctx_.state(), w);
    w.Family("sluice_submissions_total", "counter", "Jobs accepted since the controller started.");
    w.Sample("sluice_submissions_total", {}, static_cast<double>(requests_.submissions()));
    w.Family("sluice_agents_connected", "gauge", "Agents with a live lease.");
    w.Sample("sluice_agents_connected", {}, static_cast<double>(agents_.ConnectedCount()));
    capacity = CollectCapacity(ctx_.state(), counts, book_.SlotsHeldByUser());
  }
  WriteCapacity(capacity, w);
  return w.text();
}

}  // namespace sluice::server
