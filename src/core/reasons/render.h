// Plain-words rendering of pending reasons, the way `bjobs -p` prints them (R-PR-2).
//
// One header line per job, then one indented line per reason detail, most severe first
// (the main reason leads). Times are printed as `t=<seconds>`; drivers that know the wall
// clock may format them differently. Pure string formatting, no I/O.
#pragma once

#include <string>

#include "core/model/cluster_state.h"
#include "core/reasons/reason.h"

namespace sluice::core {

// "Not enough job slots: needs 64, 12 free on 240 hosts"
std::string RenderReason(const ReasonDetail& detail);

// "Job 17: user alice, queue normal, 64 tasks, submitted at t=130\n <reason>\n..."
std::string RenderPendingJob(const Job& job, const ClusterState& state,
                             const PendingReasons& reasons);

}  // namespace sluice::core
