#include "sim/pending_report.h"

namespace sluice::sim {

namespace {

const core::StartEstimate* EstimateOf(const PendingReportOptions& options, JobId job) {
  if (options.estimates == nullptr) return nullptr;
  auto it = options.estimates->find(job);
  return it == options.estimates->end() ? nullptr : &it->second;
}

}  // namespace

std::string PendingReportText(const std::vector<core::PendJob>& pending,
                              const core::ClusterState& state, Instant at,
                              const PendingReportOptions& options) {
  std::string out = std::to_string(pending.size()) + " pending " +
                    (pending.size() == 1 ? "job" : "jobs") +
                    " after the cycle at t=" + std::to_string(at) + "\n";
  for (const core::PendJob& pend : pending) {
    const core::Job* job = state.FindJob(pend.job);
    if (job == nullptr) continue;
    core::RenderOptions render{.hint = true, .estimate = {}, .per_host = options.per_host};
    if (const core::StartEstimate* estimate = EstimateOf(options, pend.job))
      render.estimate = wire::EstimateText(*estimate);
    out += "\n" + core::RenderPendingJob(*job, state, pend.reasons, render);
  }
  // Array elements that are not Jobs yet wait behind the listed ones (docs/design/arrays.md).
  for (const auto& [id, array] : state.arrays()) {
    if (array.waiting + array.held == 0) continue;
    out += "\nJob array " + std::to_string(id) + ": " + std::to_string(array.waiting) +
           " more element(s) waiting behind the ones above, " + std::to_string(array.held) +
           " held\n";
  }
  return out;
}

std::string PendingReportJsonLines(const std::vector<core::PendJob>& pending,
                                   const core::ClusterState& state,
                                   const PendingReportOptions& options) {
  std::string out;
  for (const core::PendJob& pend : pending) {
    out += wire::PendingJobToJson(pend, state, EstimateOf(options, pend.job), options.per_host)
               .dump() +
           "\n";
  }
  return out;
}

std::string PendingSummaryText(const std::vector<core::PendJob>& pending,
                               const core::ClusterState& state, Instant at) {
  return "Summary of the pending jobs after the cycle at t=" + std::to_string(at) + "\n" +
         core::RenderSummary(core::Summarize(pending, state));
}

std::string PendingSummaryJson(const std::vector<core::PendJob>& pending,
                               const core::ClusterState& state) {
  return wire::SummaryToJson(core::Summarize(pending, state)).dump() + "\n";
}

}  // namespace sluice::sim
