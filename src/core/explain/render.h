// Plain-words rendering of pending reasons, the way `bjobs -p` prints them (R-PR-2).
//
// One header line per job, then one indented line per reason detail, most severe first
// (the main reason leads), then what would let it start (hint.h), its estimated start when
// the driver has one, and on request the per-host detail (host_detail.h). Times are printed as
// `t=<seconds>`; drivers that know the wall clock may format them differently. Pure string
// formatting, no I/O.
#pragma once

#include <string>

#include "core/model/cluster_state.h"
#include "core/reasons/reason.h"

namespace sluice::core {

// "Not enough job slots: needs 64, 12 free on 240 hosts"
std::string RenderReason(const ReasonDetail& detail);

struct RenderOptions {
  bool hint = true;       // " What would let it start: <Hint()>"
  std::string estimate;   // non-empty: " Estimated start: <estimate>"
  bool per_host = false;  // -p2: " Per host:" and one line per host verdict (host_detail.h)
};

// "Job 17: user alice, queue normal, 64 tasks, submitted at t=130\n <reason>\n..."
// then, per `options`, the hint, the estimated start and the per-host detail.
std::string RenderPendingJob(const Job& job, const ClusterState& state,
                             const PendingReasons& reasons, const RenderOptions& options = {});

}  // namespace sluice::core
