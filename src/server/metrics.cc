#include "server/metrics.h"

#include <cmath>
#include <cstdio>

#include "core/admission/diagnostics.h"
#include "server/controller.h"

namespace sluice::server {

void PromWriter::Family(const std::string& name, const std::string& type, const std::string& help) {
  out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string PromWriter::EscapeLabel(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void PromWriter::Sample(const std::string& name, const Labels& labels, double value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_ += ',';
      out_ += labels[i].first + "=\"" + EscapeLabel(labels[i].second) + "\"";
    }
    out_ += '}';
  }
  char buffer[64];
  if (std::isinf(value)) {
    std::snprintf(buffer, sizeof buffer, " %s\n", value > 0 ? "+Inf" : "-Inf");
  } else if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buffer, sizeof buffer, " %.0f\n", value);
  } else {
    std::snprintf(buffer, sizeof buffer, " %.9g\n", value);
  }
  out_ += buffer;
}

namespace {
constexpr const char* kStates[] = {"PENDING", "HELD", "ADMITTING", "RUNNING",
                                   "DONE",    "EXIT", "CANCELLED"};
}  // namespace

std::string Controller::Metrics() {
  std::lock_guard lock(ctx_.mu);
  const Instant now = ctx_.Now();
  PromWriter w;
  std::map<std::pair<std::string, std::string>, int64_t> by_state;  // (state, queue)
  std::map<std::pair<std::string, std::string>, int64_t> by_reason;
  for (const core::Queue& q : ctx_.state.queues()) {
    for (const char* s : kStates) by_state[{s, q.spec.name}] = 0;
  }
  for (const auto& [id, job] : book_.jobs()) {
    by_state[{job->row.state, job->queue}] += 1;
    if (std::string reason = job->WaitReason(); !reason.empty())
      by_reason[{reason, job->queue}] += 1;
  }
  w.Family("sluice_jobs", "gauge", "Jobs by state and queue.");
  for (const auto& [key, n] : by_state) {
    w.Sample("sluice_jobs", {{"state", key.first}, {"queue", key.second}}, static_cast<double>(n));
  }
  w.Family("sluice_pending_reasons", "gauge", "Waiting jobs by main pending reason and queue.");
  for (const auto& [key, n] : by_reason) {
    w.Sample("sluice_pending_reasons", {{"reason", key.first}, {"queue", key.second}},
             static_cast<double>(n));
  }
  const std::vector<core::QueueCounters> counters = core::Counters(ctx_.state, now);
  w.Family("sluice_oldest_pending_age_seconds", "gauge", "Age of the oldest waiting job.");
  for (const auto& c : counters) {
    w.Sample("sluice_oldest_pending_age_seconds", {{"queue", c.queue}},
             static_cast<double>(c.oldest_pending_age));
  }
  w.Family("sluice_gated_heads", "gauge", "Queue heads whose aging gate is active.");
  for (const auto& c : counters) {
    w.Sample("sluice_gated_heads", {{"queue", c.queue}}, c.gated_heads);
  }
  w.Family("sluice_unschedulable_total", "counter", "Jobs ended UNSCHEDULABLE.");
  for (const auto& c : counters) {
    w.Sample("sluice_unschedulable_total", {{"queue", c.queue}},
             static_cast<double>(c.totals.unschedulable));
  }
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
  w.Family("sluice_backfilled_admissions_total", "counter", "Jobs started ahead of a blocked head.");
  for (const auto& c : counters) {
    w.Sample("sluice_backfilled_admissions_total", {{"queue", c.queue}},
             static_cast<double>(c.totals.backfilled));
  }
  w.Family("sluice_cycle_duration_seconds", "histogram", "Scheduling cycle duration.");
  for (size_t i = 0; i < std::size(kCycleBuckets); ++i) {
    char le[32];
    std::snprintf(le, sizeof le, "%g", kCycleBuckets[i]);
    w.Sample("sluice_cycle_duration_seconds_bucket", {{"le", le}},
             static_cast<double>(runner_.timing().buckets[i]));
  }
  w.Sample("sluice_cycle_duration_seconds_bucket", {{"le", "+Inf"}}, static_cast<double>(runner_.timing().count));
  w.Sample("sluice_cycle_duration_seconds_sum", {}, runner_.timing().sum);
  w.Sample("sluice_cycle_duration_seconds_count", {}, static_cast<double>(runner_.timing().count));
  w.Family("sluice_slots", "gauge", "Slots by queue and state (used by running jobs).");
  for (const core::Queue& q : ctx_.state.queues()) {
    w.Sample("sluice_slots", {{"queue", q.spec.name}, {"state", "used"}},
             static_cast<double>(q.used_slots));
  }
  w.Family("sluice_preemptions_total", "counter", "Jobs preempted.");
  for (const core::Queue& q : ctx_.state.queues()) {
    w.Sample("sluice_preemptions_total", {{"queue", q.spec.name}}, static_cast<double>(q.totals.preempted));
  }
  w.Family("sluice_submissions_total", "counter", "Jobs accepted since the controller started.");
  w.Sample("sluice_submissions_total", {}, static_cast<double>(requests_.submissions()));
  const int64_t connected = agents_.ConnectedCount();
  w.Family("sluice_agents_connected", "gauge", "Agents with a live lease.");
  w.Sample("sluice_agents_connected", {}, static_cast<double>(connected));
  return w.text();
}

}  // namespace sluice::server
