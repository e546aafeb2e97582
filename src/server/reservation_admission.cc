// AdvanceReservations' rules of a create or modify (advance_reservations.h, steps 1-5 of
// Admit): who may, which hosts, the windows, overlaps and the running jobs in the way.
#include <algorithm>
#include <set>

#include "core/alloc/capacity.h"
#include "core/alloc/host_view.h"
#include "server/advance_reservations.h"
#include "server/unix_groups.h"

namespace sluice::server {

using nlohmann::json;

namespace {

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Whether a window of `a` overlaps one of `b` that has not ended at `now` (the controller keeps
// ended windows a while: advance_reservations.cc).
bool Overlap(const std::vector<WallSpan>& a, const std::vector<WallSpan>& b, Instant now) {
  for (const WallSpan& x : a) {
    for (const WallSpan& y : b) {
      if (y.end > now && x.begin < y.end && y.begin < x.end) return true;
    }
  }
  return false;
}

std::string TimeOrNone(const std::optional<Instant>& t) {
  return t ? "t=" + std::to_string(*t) : std::string("no run limit");
}

}  // namespace

Status AdvanceReservations::Admit(const Caller& caller, ReservationRecord& r,
                                  const ReservationRecord* old,
                                  const config::UserReservationPolicy& policy,
                                  std::vector<WallSpan>& windows, bool refuse_running) {
  // 3 (first: the hosts a slots reservation picks depend on its windows).
  Result<std::vector<WallSpan>> spans = ExpandWindows(r, ctx_.Now());
  if (!spans) return spans.error();
  windows = std::move(*spans);
  if (windows.empty() && !r.recur) {
    return InvalidArgument("reservation.end: t=" + std::to_string(r.begin + r.duration) +
                           " is in the past (now t=" + std::to_string(ctx_.Now()) + ")");
  }
  // 1. who (a user may change only their own).
  if (old != nullptr && !caller.admin && old->creator != caller.user) {
    return Status(StatusCode::kPermissionDenied, "reservation " + old->name + " belongs to " +
                                                     old->creator + "; " + caller.user +
                                                     " may change only their own");
  }
  if (!caller.admin && (r.maint || r.ignore_jobs)) {
    return Status(StatusCode::kPermissionDenied, std::string("reservation.") +
                                                     (r.maint ? "maint" : "ignore_jobs") +
                                                     ": administrators only");
  }
  // 2. the hosts.
  SLUICE_RETURN_IF_ERROR(ResolveHosts(r, windows));
  if (!caller.admin) SLUICE_RETURN_IF_ERROR(Authorize(caller, r, policy, windows));
  // 4. overlaps; 5. running jobs.
  SLUICE_RETURN_IF_ERROR(CheckOverlap(r, windows));
  if (r.ignore_jobs || !refuse_running || windows.empty()) return Status::Ok();
  const std::vector<Running> running = RunningInto(r, windows.front().begin);
  if (running.empty()) return Status::Ok();
  std::string list;
  for (const Running& job : running) {
    if (!list.empty()) list += "; ";
    list += "job " + std::to_string(job.id) + " of " + job.user + " on " + job.hosts.front() +
            " until " + TimeOrNone(job.end);
  }
  return FailedPrecondition("reservation " + r.name + ": " + std::to_string(running.size()) +
                            " running job(s) would still run when it begins at t=" +
                            std::to_string(windows.front().begin) + ": " + list +
                            " (wait for them, or set ignore_jobs)");
}

Status AdvanceReservations::Authorize(const Caller& caller, const ReservationRecord& r,
                                      const config::UserReservationPolicy& policy,
                                      const std::vector<WallSpan>& /*windows*/) const {
  if (caller.admin) return Status::Ok();
  if (!policy.enabled) {
    return Status(StatusCode::kPermissionDenied,
                  caller.user +
                      " is not an administrator, and the cluster's reservations "
                      "policy lets no user make reservations");
  }
  bool listed = policy.users.empty() && policy.groups.empty();
  listed = listed || Contains(policy.users, caller.user);
  if (!listed && !policy.groups.empty()) {
    const std::string account = caller.account.empty() ? caller.user : caller.account;
    for (const std::string& group : UnixGroupsOf(account))
      listed = listed || Contains(policy.groups, group);
  }
  if (!listed) {
    return Status(StatusCode::kPermissionDenied,
                  caller.user +
                      " is not among the users the reservations policy lets make "
                      "reservations");
  }
  if (r.creator != caller.user) {
    return Status(StatusCode::kPermissionDenied, "reservation " + r.name + " belongs to " +
                                                     r.creator + "; " + caller.user +
                                                     " may change only their own");
  }
  if (policy.max_hosts && static_cast<int64_t>(r.hosts.size()) > *policy.max_hosts) {
    return Status(StatusCode::kPermissionDenied,
                  "reservation.hosts: " + std::to_string(r.hosts.size()) +
                      " hosts; the reservations policy lets a user reserve at most " +
                      std::to_string(*policy.max_hosts));
  }
  if (policy.max_duration && r.duration > *policy.max_duration) {
    return Status(StatusCode::kPermissionDenied,
                  "reservation.duration: " + std::to_string(r.duration) +
                      " s; the reservations policy lets a user reserve at most " +
                      std::to_string(*policy.max_duration) + " s at a time");
  }
  return Status::Ok();
}

// Named hosts must exist. For slots: the hosts matching the request, those without a running
// job that would run into the first window first, then in the cluster's order (deterministic),
// leaving out hosts another reservation holds at an overlapping time (unless one is MAINT),
// until their slots reach `slots`.
Status AdvanceReservations::ResolveHosts(ReservationRecord& r,
                                         const std::vector<WallSpan>& windows) const {
  const core::Topology& topology = ctx_.state().topology();
  if (!r.slots || !r.hosts.empty()) {  // named, or picked already (a modify keeps them)
    for (const std::string& host : r.hosts) {
      if (!topology.FindHost(host)) {
        return InvalidArgument("reservation.hosts: no host named '" + host + "'");
      }
    }
    return Status::Ok();
  }
  const core::resreq::Request* request = nullptr;
  if (r.request && !r.request->empty()) {
    auto compiled = const_cast<ServerContext&>(ctx_).memoizing_state().CompileRequest(*r.request);
    if (!compiled) return InvalidArgument("reservation.request: " + compiled.error().message());
    request = *compiled;
  }
  const core::ClusterState& state = ctx_.state();
  const core::Capacity capacity = core::Capacity::AllConfigured(state);
  core::CapacityHostView view(state, capacity);
  std::vector<std::pair<bool, HostIndex>> candidates;  // (busy into the window, host)
  std::set<std::string> busy;
  if (!windows.empty()) {
    ReservationRecord all = r;
    all.hosts.clear();
    for (const core::Host& h : topology.hosts()) all.hosts.push_back(h.spec.name);
    for (const Running& job : RunningInto(all, windows.front().begin)) {
      busy.insert(job.hosts.begin(), job.hosts.end());
    }
  }
  for (const core::Host& h : topology.hosts()) {
    bool matches = request == nullptr;
    view.Bind(h.index);
    for (size_t a = 0; request != nullptr && !matches && a < request->alternatives.size(); ++a) {
      for (const auto& part : request->alternatives[a].parts) {
        matches = matches || state.requests().PassesSelect(part.select, h.index, view);
      }
    }
    if (!matches) continue;
    ReservationRecord one = r;
    one.hosts = {h.spec.name};
    if (!CheckOverlap(one, windows).ok()) continue;
    candidates.emplace_back(busy.contains(h.spec.name), h.index);
  }
  std::stable_sort(candidates.begin(), candidates.end());
  r.hosts.clear();
  int64_t total = 0;
  for (const auto& [is_busy, index] : candidates) {
    if (total >= *r.slots) break;
    r.hosts.push_back(topology.hosts()[index].spec.name);
    total += topology.hosts()[index].spec.slots;
  }
  if (total < *r.slots) {
    return FailedPrecondition("reservation.slots: " + std::to_string(*r.slots) +
                              " slots wanted; the hosts matching '" + r.request.value_or("") +
                              "' that no other reservation holds then have " +
                              std::to_string(total));
  }
  return Status::Ok();
}

Status AdvanceReservations::CheckOverlap(const ReservationRecord& r,
                                         const std::vector<WallSpan>& windows) const {
  if (r.maint) return Status::Ok();
  for (const auto& [name, other] : records_) {
    if (name == r.name || other.maint) continue;
    auto w = windows_.find(name);
    if (w == windows_.end() || !Overlap(windows, w->second, ctx_.Now())) continue;
    for (const std::string& host : r.hosts) {
      if (!Contains(other.hosts, host)) continue;
      return FailedPrecondition("reservation " + r.name + " overlaps reservation " + name +
                                " on host " + host +
                                " (only a MAINT reservation may overlap another)");
    }
  }
  return Status::Ok();
}

std::vector<AdvanceReservations::Running> AdvanceReservations::RunningInto(
    const ReservationRecord& r, Instant from) const {
  std::vector<Running> out;
  for (const auto& [id, job] : book_.jobs()) {
    if (!job->HoldsAllocation()) continue;
    if (!r.name.empty() && job->reservation == r.name) continue;
    std::vector<std::string> hosts;
    bool on = false;
    for (const auto& [host, slots] : job->launch().hosts) {
      hosts.push_back(host);
      on = on || Contains(r.hosts, host);
    }
    if (!on) continue;
    std::optional<Instant> end;
    if (std::optional<int64_t> limit = RunLimitOf(*job)) end = job->row.start_time + *limit;
    if (end && *end <= from) continue;
    out.push_back({id, job->user.str(), std::move(hosts), end});
  }
  return out;
}

}  // namespace sluice::server
