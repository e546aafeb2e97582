#include "core/explain/render.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/array_ids.h"
#include "core/explain/hint.h"
#include "core/explain/host_detail.h"

namespace sluice::core {
namespace {

std::string TimeText(Instant t) {
  return t == kInfinite ? "an unknown time" : "t=" + std::to_string(t);
}

std::string HostsText(int32_t hosts) {
  return std::to_string(hosts) + (hosts == 1 ? " host" : " hosts");
}

std::string TasksText(const JobSpec& spec) {
  if (spec.min_tasks == spec.max_tasks) {
    return std::to_string(spec.max_tasks) + (spec.max_tasks == 1 ? " task" : " tasks");
  }
  return std::to_string(spec.min_tasks) + "-" + std::to_string(spec.max_tasks) + " tasks";
}

// NO_RESOURCE: what is short, and where (per host, per group, one host, or in total).
std::string NoResourceText(const ReasonDetail& detail) {
  if (detail.per_host > 0) {
    return "Not enough hosts with room for " + std::to_string(detail.per_host) + " tasks" +
           (detail.same.empty() ? "" : " sharing one " + detail.same) + ": needs " +
           std::to_string(detail.needed) + ", " + std::to_string(detail.available) + " have room";
  }
  std::string line = detail.resource == "slots"   ? "Not enough job slots"
                     : detail.resource == "tasks" ? "Not enough room for the job's tasks"
                                                  : "Not enough " + detail.resource;
  if (!detail.devices.empty()) line += " (" + detail.devices + ")";
  if (!detail.scope.empty()) {  // the only matching host, named
    return line + " on " + detail.scope + ": needs " + std::to_string(detail.needed) + ", " +
           std::to_string(detail.available) + " free";
  }
  if (!detail.same.empty()) {
    return line + " among hosts with the same " + detail.same + ": needs " +
           std::to_string(detail.needed) + ", at most " + std::to_string(detail.available) +
           " free in one group of " + HostsText(detail.hosts);
  }
  if (detail.one_host) {
    return line + " on any one host: needs " + std::to_string(detail.needed) + ", at most " +
           std::to_string(detail.available) + " free on one of " + HostsText(detail.hosts);
  }
  return line + ": needs " + std::to_string(detail.needed) + ", " +
         std::to_string(detail.available) + " free on " + HostsText(detail.hosts);
}

// " on h[1-8] from t=1000 to t=2000": where and when a reservation's window keeps its hosts,
// as far as the detail knows (a detail from an older controller may lack hosts or the end).
std::string WindowText(const ReasonDetail& detail) {
  std::string text = detail.host_names.empty() ? "" : " on " + detail.host_names;
  text += " from " + TimeText(detail.time);
  if (detail.until != kInfinite) text += " to " + TimeText(detail.until);
  return text;
}

// LIMIT and HOST_LIMIT: the limit, whom it binds and how full it is.
std::string LimitText(const ReasonDetail& detail) {
  std::string line =
      std::string(detail.code == ReasonCode::kHostLimit ? "Per-host limit '" : "Limit '") +
      detail.limit + "' is reached" + (detail.scope.empty() ? "" : " for " + detail.scope) + " (" +
      std::to_string(detail.used) + "/" + std::to_string(detail.max) + " " +
      (detail.resource.empty() ? "slots" : detail.resource) + ")";
  if (detail.hosts > 0) line += ": " + HostsText(detail.hosts);
  return line;
}

}  // namespace

std::string RenderReason(const ReasonDetail& detail) {
  std::string line(Headline(detail.code));
  switch (detail.code) {
    case ReasonCode::kNoResource:
      line = NoResourceText(detail);
      break;
    case ReasonCode::kSharedResource:
      line = "Not enough shared resource " + detail.resource + ": needs " +
             std::to_string(detail.needed) + ", " + std::to_string(detail.available) + " free";
      break;
    case ReasonCode::kNoMatch:
    case ReasonCode::kExclusive:
    case ReasonCode::kHostClosed:
    case ReasonCode::kHostUnavail:
      line += ": " + HostsText(detail.hosts);
      break;
    case ReasonCode::kPriorityWait:
      line = "Waiting behind job " + std::to_string(detail.job) + " (queue head)";
      break;
    case ReasonCode::kReserved:
      line = "Free slots are reserved for job " + std::to_string(detail.job) +
             " (queue head), which is expected to start at " + TimeText(detail.time);
      break;
    case ReasonCode::kGated:
      line = "Waiting behind job " + std::to_string(detail.job) +
             " (queue head, gate active since " + TimeText(detail.time) + ")";
      if (detail.hosts > 0) line += ": " + HostsText(detail.hosts) + " held for it";
      break;
    case ReasonCode::kBeginTime:
      line += ": it may start at " + TimeText(detail.time);
      break;
    case ReasonCode::kQueueRunLimit:
      line += ": " + std::to_string(detail.available) + " of " + std::to_string(detail.needed) +
              " " + (detail.resource.empty() ? "jobs" : detail.resource) + " in use";
      break;
    case ReasonCode::kLimit:
    case ReasonCode::kHostLimit:
      line = LimitText(detail);
      break;
    case ReasonCode::kUserLimit:
      line += " (" + std::to_string(detail.used) + "/" + std::to_string(detail.max) + " slots)";
      break;
    case ReasonCode::kArrayLimit:
      line += " (" + detail.scope + ": " + std::to_string(detail.used) + "/" +
              std::to_string(detail.max) + " running)";
      break;
    case ReasonCode::kQueueCapacity:
      line += " (" + std::to_string(detail.used) + "/" + std::to_string(detail.max) + " slots)";
      break;
    case ReasonCode::kDependency:
      if (!detail.condition.empty()) {
        line += detail.never ? ": " + detail.condition + " can never be satisfied"
                             : ": waiting for " + detail.condition;
      }
      break;
    case ReasonCode::kQueueWindow:
      line += ": it opens at " + TimeText(detail.time);
      break;
    case ReasonCode::kHostReserved:
      line = HostsText(detail.hosts) + (detail.hosts == 1 ? " is" : " are") + " kept by " +
             detail.scope + WindowText(detail) +
             ", which the job would run into (it must end by its run limit before then)";
      break;
    case ReasonCode::kReservationWait:
      line = detail.time == kInfinite
                 ? "The job's " + detail.scope + " has no window left"
                 : "The job's " + detail.scope + " is closed until its window" + WindowText(detail);
      break;
    case ReasonCode::kReservationDenied:
      line = "The job's user may not run jobs in " + detail.scope;
      break;
    case ReasonCode::kPreempting:
      if (detail.used > 0) {
        line = "Slots are being freed for the job; waiting for " + std::to_string(detail.used) +
               (detail.used == 1 ? " preempted job" : " preempted jobs") + " to exit";
      }
      if (detail.hosts > 0) line += ": " + HostsText(detail.hosts) + " kept for it";
      if (detail.time != kInfinite) line += " (grace ends at " + TimeText(detail.time) + ")";
      break;
    case ReasonCode::kFairshare:
      if (detail.job != kNoJob) line += ": waiting behind job " + std::to_string(detail.job);
      break;
    case ReasonCode::kNewJob:
    case ReasonCode::kHeld:
    case ReasonCode::kQueueInactive:
    case ReasonCode::kDispatchFailed:
    case ReasonCode::kInternal:
      break;
  }
  return line;
}

std::string RenderPendingJob(const Job& job, const ClusterState& state,
                             const PendingReasons& reasons, const RenderOptions& options) {
  std::string out = "Job " + FormatJobId(job.spec.id) + ": user " +
                    (job.spec.user.empty() ? "-" : job.spec.user) + ", queue " +
                    state.topology().queues()[job.queue].spec.name + ", " + TasksText(job.spec) +
                    ", submitted at " + TimeText(job.spec.submit_time) + "\n";
  // Most severe first; equal severity keeps detail order.
  std::vector<const ReasonDetail*> ordered;
  for (const ReasonDetail& detail : reasons.details) ordered.push_back(&detail);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const ReasonDetail* a, const ReasonDetail* b) {
                     return Severity(a->code) > Severity(b->code);
                   });
  for (const ReasonDetail* detail : ordered) out += " " + RenderReason(*detail) + "\n";
  if (ordered.empty()) out += " " + std::string(Headline(ReasonCode::kNewJob)) + "\n";
  if (options.hint) out += " What would let it start: " + Hint(job, state, reasons) + "\n";
  if (!options.estimate.empty()) out += " Estimated start: " + options.estimate + "\n";
  if (options.per_host) {
    out += " Per host (as the last cycle left them):\n" +
           RenderHostDetail(ExplainHosts(job, state), state);
  }
  return out;
}

}  // namespace sluice::core
