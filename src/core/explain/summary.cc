#include "core/explain/summary.h"

#include <algorithm>
#include <set>

namespace sluice::core {
namespace {

void Count(const PendingReasons& reasons, ReasonCounts& counts) {
  ++counts.jobs;
  ++counts.by_main[reasons.main];
  std::set<ReasonCode> seen;
  for (const ReasonDetail& detail : reasons.details) seen.insert(detail.code);
  for (ReasonCode code : seen) ++counts.by_any[code];
}

// Codes by count descending, then by severity descending (the order a reader wants).
std::vector<std::pair<ReasonCode, int64_t>> Ranked(const std::map<ReasonCode, int64_t>& counts) {
  std::vector<std::pair<ReasonCode, int64_t>> ranked(counts.begin(), counts.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return Severity(a.first) > Severity(b.first);
  });
  return ranked;
}

std::string Padded(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string JobsText(int64_t n) { return std::to_string(n) + (n == 1 ? " job" : " jobs"); }

}  // namespace

PendingSummary Summarize(const std::vector<PendJob>& pending, const ClusterState& state) {
  PendingSummary summary;
  for (const PendJob& pend : pending) {
    Count(pend.reasons, summary.all);
    const Job* job = state.FindJob(pend.job);
    const std::string queue =
        job == nullptr ? "-" : state.topology().queues()[job->queue].spec.name;
    Count(pend.reasons, summary.by_queue[queue]);
  }
  return summary;
}

std::string RenderSummary(const PendingSummary& summary) {
  std::string out = "Pending jobs by main reason (" + JobsText(summary.all.jobs) + "):\n";
  for (const auto& [code, n] : Ranked(summary.all.by_main)) {
    out += Padded("  " + Padded(std::to_string(n), 6), 8) +
           Padded(std::string(ToString(code)), 17) + std::string(Headline(code)) + "\n";
  }
  out += "Jobs with each reason among their details:\n";
  for (const auto& [code, n] : Ranked(summary.all.by_any)) {
    out += "  " + Padded(std::to_string(n), 6) + std::string(ToString(code)) + "\n";
  }
  out += "By queue:\n";
  for (const auto& [queue, counts] : summary.by_queue) {
    out += "  " + queue + ": " + JobsText(counts.jobs) + ":";
    bool first = true;
    for (const auto& [code, n] : Ranked(counts.by_main)) {
      out +=
          std::string(first ? " " : ", ") + std::string(ToString(code)) + " " + std::to_string(n);
      first = false;
    }
    out += "\n";
  }
  return out;
}

}  // namespace sluice::core
