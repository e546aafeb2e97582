// Cluster-wide summary of pending reasons (`bjobs -psum` style): how many jobs wait for
// what, by main reason and by queue, and how many carry each reason among their details.
// Pure counting over the explanations of one cycle; deterministic (ordered maps).
// Implements the summary part of R-PR-2.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model/cluster_state.h"
#include "core/model/decision.h"
#include "core/reasons/reason.h"

namespace sluice::core {

struct ReasonCounts {
  int64_t jobs = 0;
  std::map<ReasonCode, int64_t> by_main;  // jobs whose main reason is the code
  std::map<ReasonCode, int64_t> by_any;   // jobs with at least one detail of the code
};

struct PendingSummary {
  ReasonCounts all;
  std::map<std::string, ReasonCounts> by_queue;  // by queue name
};

// Counts the jobs of `pending` (PendJob decisions of one cycle); jobs unknown to `state` are
// counted under queue "-".
PendingSummary Summarize(const std::vector<PendJob>& pending, const ClusterState& state);

// The text form:
//   Pending jobs by main reason (12 jobs):
//        8  NO_RESOURCE      Not enough job slots
//   ...
//   By queue:
//     normal: 10 jobs: NO_RESOURCE 6, PRIORITY_WAIT 4
std::string RenderSummary(const PendingSummary& summary);

}  // namespace sluice::core
