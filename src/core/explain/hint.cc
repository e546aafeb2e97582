#include "core/explain/hint.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

namespace sluice::core {
namespace {

std::string TimeText(Instant t) {
  return t == kInfinite ? "an unknown time" : "t=" + std::to_string(t);
}

std::string Plural(int64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// " on hosts with type==linux" (the first part's select) and the queue's host group, if any.
std::string WhereText(const Job& job, const ClusterState& state) {
  std::string where;
  const resreq::Primary& part = job.request->alternatives.front().parts.front();
  if (part.select != resreq::kNoExpr) {
    where = " on hosts with " + resreq::NormalizeExpr(part.select, state.requests().expr_pool());
  }
  const Queue& queue = state.topology().queues()[job.queue];
  if (!queue.all_hosts) {
    where += (where.empty() ? " on hosts of queue '" : " in queue '") + queue.spec.name + "'";
  }
  return where;
}

std::string NoResourceHint(const ReasonDetail& d, const Job& job, const ClusterState& state) {
  const std::string where = WhereText(job, state);
  const int64_t more = std::max<int64_t>(1, d.needed - d.available);
  if (d.hosts == 0 && d.resource != "slots" && d.resource != "tasks" && d.resource != "hosts") {
    return "needs " + std::to_string(d.needed) + " " + d.resource +
           ", which no host defines; change the request";
  }
  if (d.per_host > 0) {
    return "needs " + Plural(more, "more host", "more hosts") + " with room for " +
           Plural(d.per_host, "task", "tasks") + (d.same.empty() ? "" : " sharing one " + d.same) +
           where;
  }
  if (!d.same.empty()) {
    const std::string what = d.resource == "tasks"
                                 ? "room for " + Plural(d.needed, "task", "tasks")
                                 : std::to_string(d.needed) + " free " + d.resource;
    return "needs " + what + (where.empty() ? " on hosts" : where) + " that share one " + d.same +
           " (the best group has " + (d.resource == "tasks" ? "room for " : "") +
           std::to_string(d.available) + ")";
  }
  if (d.one_host) {
    return "needs one host with " + std::to_string(d.needed) + " free " + d.resource + where +
           " (the best has " + std::to_string(d.available) + ")";
  }
  if (d.resource == "tasks") {
    return "needs room for " + Plural(d.needed, "task", "tasks") + where + ": there is room for " +
           std::to_string(d.available) + " where both slots and resources are free";
  }
  const std::string unit = d.resource == "slots" ? (more == 1 ? "slot" : "slots") : d.resource;
  return "needs " + std::to_string(more) + " more " + unit + where +
         " — starts when running jobs free them";
}

std::string LimitHint(const ReasonDetail& d, const Job& job, const ClusterState& state) {
  const std::string resource = d.resource.empty() ? "slots" : d.resource;
  const std::string numbers = std::to_string(d.used) + "/" + std::to_string(d.max) + " " + resource;
  if (d.code == ReasonCode::kHostLimit) {
    return "per-host limit '" + d.limit + "' reached" +
           (d.hosts > 0 ? " on " + Plural(d.hosts, "host", "hosts") : "") + " (" +
           (d.scope.empty() ? "" : d.scope + ": ") + numbers +
           ") — starts when a job it counts ends on one of them";
  }
  std::string text =
      "limit '" + d.limit + "' " + numbers + (d.scope.empty() ? "" : " for " + d.scope);
  const int64_t running = RunningJobsInScope(state, d.scope);
  const int64_t over = d.used + job.min_slots - d.max;
  if (running > 0) {
    text += " — starts when " + std::string(running == 1 ? "the" : "one of the") + " " +
            (running == 1 ? std::string("running job")
                          : Plural(running, "running job", "running jobs")) +
            " it counts ends";
    if (resource == "slots" && over > 1)
      text += " (" + std::to_string(over) + " slots must be freed)";
    return text;
  }
  return text + " — starts when jobs it counts end";
}

// QUEUE_RUN_LIMIT: how full the queue is and what must end.
std::string QueueRunLimitHint(const ReasonDetail& d, const Job& job, const Queue& queue) {
  const bool slots = d.resource == "slots";
  const int64_t running = queue.running_jobs;
  std::string text = "queue '" + queue.spec.name + "' runs " + std::to_string(d.available) + "/" +
                     std::to_string(d.needed) + " " + (slots ? "slots" : "jobs") +
                     " — starts when ";
  if (slots && d.available + job.min_slots - d.needed > 1) {
    return text + "its running jobs free " +
           std::to_string(d.available + job.min_slots - d.needed) + " slots";
  }
  return text + (running == 1 ? std::string("its running job ends")
                              : "one of its " + std::to_string(running) + " running jobs ends");
}

}  // namespace

int64_t RunningJobsInScope(const ClusterState& state, const std::string& scope) {
  // "user alice, queue normal": every part must match.
  struct Part {
    std::string kind;
    std::string name;
    std::optional<HostIndex> host;
  };
  std::vector<Part> parts;
  for (size_t at = 0; at < scope.size();) {
    size_t end = scope.find(", ", at);
    if (end == std::string::npos) end = scope.size();
    const std::string piece = scope.substr(at, end - at);
    at = end + 2;
    const size_t space = piece.find(' ');
    if (space == std::string::npos) return -1;
    Part part{
        .kind = piece.substr(0, space), .name = piece.substr(space + 1), .host = std::nullopt};
    if (part.kind == "host") {
      part.host = state.topology().FindHost(part.name);
      if (!part.host) return -1;
    } else if (part.kind != "user" && part.kind != "queue" && part.kind != "project") {
      return -1;
    }
    parts.push_back(std::move(part));
  }
  if (parts.empty()) return -1;
  auto matches = [&](const Job& job, const Part& part) {
    if (part.kind == "user") return job.spec.user == part.name;
    if (part.kind == "project") return job.spec.project == part.name;
    if (part.kind == "queue") return state.topology().queues()[job.queue].spec.name == part.name;
    return std::any_of(job.allocation.hosts.begin(), job.allocation.hosts.end(),
                       [&](const HostGrant& g) { return g.host == *part.host; });
  };
  int64_t count = 0;
  for (const RunningEntry& entry : state.running()) {
    count += std::all_of(parts.begin(), parts.end(),
                         [&](const Part& part) { return matches(*entry.job, part); });
  }
  return count;
}

namespace {

// The host-state reasons (EXCLUSIVE, HOST_CLOSED, HOST_UNAVAIL): what frees a matching host.
std::string HostStateHint(const ReasonDetail& d) {
  switch (d.code) {
    case ReasonCode::kExclusive:
      return "an idle host: " + Plural(d.hosts, "matching host runs", "matching hosts run") +
             " other jobs — starts when one of them empties";
    case ReasonCode::kHostClosed:
      return Plural(d.hosts, "matching host is", "matching hosts are") +
             " closed or draining — starts when one reopens (opened by an administrator, its "
             "health check passing again)";
    default:  // kHostUnavail
      return Plural(d.hosts, "matching host is", "matching hosts are") +
             " unavailable — starts when one comes back";
  }
}

// The queue's share rules (QUEUE_CAPACITY, USER_LIMIT; R-CAP-1, R-CAP-2).
std::string QueueShareHint(const ReasonDetail& d, const Job& job, const Queue& queue) {
  if (d.code == ReasonCode::kQueueCapacity) {
    return "queue '" + queue.spec.name + "' at its maximum capacity " + std::to_string(d.used) +
           "/" + std::to_string(d.max) + " slots — starts when its running jobs free " +
           Plural(std::max<int64_t>(1, d.used + job.min_slots - d.max), "slot", "slots");
  }
  return "user " + (job.spec.user.empty() ? std::string("-") : job.spec.user.str()) + " holds " +
         std::to_string(d.used) + "/" + std::to_string(d.max) +
         " slots of the queue's minimum user share while others wait — starts when one of its "
         "jobs ends";
}

}  // namespace

std::string Hint(const Job& job, const ClusterState& state, const PendingReasons& reasons) {
  const auto main =
      std::find_if(reasons.details.begin(), reasons.details.end(),
                   [&](const ReasonDetail& detail) { return detail.code == reasons.main; });
  const ReasonDetail fallback{.code = reasons.main};
  const ReasonDetail& d = main != reasons.details.end() ? *main : fallback;
  const Queue& queue = state.topology().queues()[job.queue];
  const std::string id = std::to_string(job.spec.id);
  switch (d.code) {
    case ReasonCode::kNewJob:
      return "nothing: the next scheduling cycle considers it";
    case ReasonCode::kHeld:
      return "released by `sluice release " + id + "`";
    case ReasonCode::kBeginTime:
      return "its begin time: it may start from " + TimeText(d.time);
    case ReasonCode::kQueueInactive:
      return "an administrator activating queue '" + queue.spec.name + "'";
    case ReasonCode::kQueueRunLimit:
      return QueueRunLimitHint(d, job, queue);
    case ReasonCode::kPriorityWait:
      return "waits for job " + std::to_string(d.job) + " (queue head) to start first";
    case ReasonCode::kReserved:
      return "free slots are reserved for job " + std::to_string(d.job) + " (queue head) from " +
             TimeText(d.time) + " — starts once job " + std::to_string(d.job) +
             " has started, or sooner with a run limit that ends it by then";
    case ReasonCode::kGated:
      return "waits for job " + std::to_string(d.job) + " (queue head, gate active since " +
             TimeText(d.time) + ") to start first";
    case ReasonCode::kNoResource:
      return NoResourceHint(d, job, state);
    case ReasonCode::kNoMatch:
      return "a host that satisfies its select[]" + WhereText(job, state) +
             " (none does now; select[] on free amounts changes as jobs end)";
    case ReasonCode::kSharedResource:
      return "needs " + std::to_string(std::max<int64_t>(1, d.needed - d.available)) +
             " more of shared resource " + d.resource + " (" + std::to_string(d.available) +
             " free) — starts when jobs holding it end";
    case ReasonCode::kExclusive:
    case ReasonCode::kHostClosed:
    case ReasonCode::kHostUnavail:
      return HostStateHint(d);
    case ReasonCode::kDependency:
      if (d.never)
        return "nothing: " + d.condition + " can never be satisfied; cancel it (`sluice cancel " +
               id + "`)";
      return "its dependency " + (d.condition.empty() ? std::string("condition") : d.condition) +
             " being satisfied";
    case ReasonCode::kQueueWindow:
      return "queue '" + queue.spec.name + "' opening its dispatch window at " + TimeText(d.time);
    case ReasonCode::kHostReserved:
      return Plural(d.hosts, "matching host is", "matching hosts are") + " kept by " + d.scope +
             " from " + TimeText(d.time) +
             " — starts on them after its windows, or sooner with a run limit that ends it "
             "before then (`sluice modify -W`)";
    case ReasonCode::kReservationWait:
      if (d.time == kInfinite) {
        return "nothing: its " + d.scope +
               " has no window left; move it out of it (`sluice modify " + id + "`) or cancel it";
      }
      return "its " + d.scope + " opening at " + TimeText(d.time);
    case ReasonCode::kReservationDenied:
      return "nothing while its " + d.scope + " does not admit its user: an administrator " +
             "adds the user (`sluice rsv modify`), or move the job out of it (`sluice modify " +
             id + "`)";
    case ReasonCode::kQueueCapacity:
    case ReasonCode::kUserLimit:
      return QueueShareHint(d, job, queue);
    case ReasonCode::kLimit:
    case ReasonCode::kHostLimit:
      return LimitHint(d, job, state);
    case ReasonCode::kFairshare:
      return std::string(d.job != kNoJob ? "waits for job " + std::to_string(d.job) + " of a user"
                                         : "users") +
             " with a higher fairshare priority to start first; its turn comes sooner as its own "
             "usage decays";
    case ReasonCode::kPreempting:
      return (d.used > 0 ? Plural(d.used, "preempted job", "preempted jobs")
                         : std::string("preempted jobs")) +
             " exiting; it starts as soon as they have" +
             (d.time == kInfinite ? std::string() : " (grace ends at " + TimeText(d.time) + ")");
    case ReasonCode::kDispatchFailed:
      return "a retry: the next cycle dispatches it again";
    case ReasonCode::kInternal:
      return "nothing it can do: an evaluation error, please report it";
    case ReasonCode::kArrayLimit:
      return "one of the " + std::to_string(d.used) + " running elements of " + d.scope +
             " ending (at most " + std::to_string(d.max) + " run at once)";
  }
  return "unknown";
}

}  // namespace sluice::core
