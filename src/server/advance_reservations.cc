// AdvanceReservations (advance_reservations.h): records, the core's set, requests and jobs.
// The rules of a create or modify are in reservation_admission.cc, the preview in
// reservation_preview.cc.
#include "server/advance_reservations.h"

#include <algorithm>
#include <utility>

#include "server/unix_groups.h"

namespace sluice::server {

using nlohmann::json;

namespace {

constexpr Duration kRefreshAtLeastEvery = 3600;
constexpr Duration kEndedKept = 3600;

// A window that ended long ago: the core needs one window per reservation, and a reservation
// with none ahead (a recurrence not yet begun, or over) must stay known by name.
constexpr WallSpan kNoWindowLeft{0, 1};

std::string NotFoundText(const std::string& name) { return "no reservation named '" + name + "'"; }

}  // namespace

// --- Restart ------------------------------------------------------------------------------------

void AdvanceReservations::Restore(const std::map<std::string, std::string>& rows) {
  records_.clear();
  for (const auto& [name, text] : rows) {
    Result<ReservationRecord> r = FromStoredJson(name, text);
    if (!r) {
      ctx_.log().error("{}; left out", r.error().message());
      continue;
    }
    records_.emplace(name, std::move(*r));
  }
  if (Status s = Publish(); !s.ok()) {
    ctx_.log().error("reservations not restored: {}", s.message());
  } else if (!records_.empty()) {
    ctx_.log().info("restored {} advance reservations", records_.size());
  }
}

void AdvanceReservations::AddRows(store::WriteBatch& batch) const {
  for (const std::string& name : deleted_) batch.reservations[name] = std::nullopt;
  for (const auto& [name, r] : records_) batch.reservations[name] = ToStoredJson(r);
}

// --- The core's set -----------------------------------------------------------------------------

core::AdvanceReservationSpec AdvanceReservations::CoreSpec(
    const ReservationRecord& r, const std::vector<WallSpan>& windows) const {
  const Instant offset = ctx_.state().config().epoch_offset;
  core::AdvanceReservationSpec spec{.name = r.name,
                                    .hosts = r.hosts,
                                    .users = r.users,
                                    .groups = r.groups,
                                    .maint = r.maint,
                                    .overrun = r.overrun};
  std::vector<WallSpan> spans = windows;
  if (spans.empty()) {
    spans.push_back(r.recur ? kNoWindowLeft : WallSpan{r.begin, r.begin + r.duration});
  }
  for (const WallSpan& w : spans) spec.windows.push_back({w.begin - offset, w.end - offset});
  return spec;
}

Status AdvanceReservations::Publish() {
  const Instant now = ctx_.Now();
  std::vector<core::AdvanceReservationSpec> specs;
  std::map<std::string, std::vector<WallSpan>> windows;
  next_refresh_ = now + kRefreshAtLeastEvery;
  for (const auto& [name, r] : records_) {
    // A window stays kEndedKept past its end + overrun: its jobs' run limits (RunLimitOf) and
    // the message of those it ended (reported late, maybe) still come from it.
    Result<std::vector<WallSpan>> spans = ExpandWindows(r, now - r.overrun - kEndedKept);
    if (!spans) {
      ctx_.log().error("reservation {}: {}; it keeps no window", name, spans.error().message());
      spans = std::vector<WallSpan>{};
    }
    for (const WallSpan& w : *spans) {
      if (!r.recur || w.end <= now) continue;
      next_refresh_ = std::min(next_refresh_, w.end);  // the next ones follow it in the list
      break;
    }
    specs.push_back(CoreSpec(r, *spans));
    windows[name] = std::move(*spans);
  }
  SLUICE_RETURN_IF_ERROR(ctx_.ApplyLocked(core::ReservationsChanged{std::move(specs)}, ""));
  windows_ = std::move(windows);
  ctx_.cycle().MarkDirty();
  return Status::Ok();
}

void AdvanceReservations::RefreshIfDue() {
  if (records_.empty() || ctx_.Now() < next_refresh_) return;
  if (Status s = Publish(); !s.ok()) {
    ctx_.log().error("reservations: the next windows were refused: {}", s.message());
  }
}

// --- Requests -----------------------------------------------------------------------------------

Outcome<json> AdvanceReservations::Commit(MutexLock& lock, const std::string& name,
                                          std::optional<ReservationRecord> r, json answer) {
  std::map<std::string, ReservationRecord> saved = records_;
  if (r) {
    records_[name] = std::move(*r);
  } else {
    records_.erase(name);
  }
  if (Status s = Publish(); !s.ok()) {
    records_ = std::move(saved);
    (void)Publish();
    return FailedPrecondition(s.message());
  }
  store::WriteBatch batch;
  if (auto it = records_.find(name); it != records_.end()) {
    batch.reservations[name] = ToStoredJson(it->second);
    deleted_.erase(name);
  } else {
    batch.reservations[name] = std::nullopt;
    deleted_.insert(name);
  }
  ResendRunLimits(name);
  if (Status s = ctx_.writes().WriteAndWait(lock, std::move(batch)); !s.ok()) return s;
  return answer;
}

Outcome<json> AdvanceReservations::Create(MutexLock& lock, const Caller& caller, const json& body,
                                          const config::UserReservationPolicy& policy) {
  if (!ctx_.writes().Writable()) {
    return Status(StatusCode::kUnavailable, "not leading: the store cannot be written");
  }
  Result<ReservationRecord> parsed = ParseReservation(body, ReservationBodyKind::kCreate, nullptr);
  if (!parsed) return parsed.error();
  ReservationRecord r = std::move(*parsed);
  if (records_.contains(r.name)) {
    return Status(StatusCode::kAlreadyExists, "reservation " + r.name + " exists");
  }
  r.creator = caller.user;
  r.created = ctx_.Now();
  if (r.users.empty() && r.groups.empty()) r.users = {caller.user};
  std::vector<WallSpan> windows;
  SLUICE_RETURN_IF_ERROR(Admit(caller, r, nullptr, policy, windows));
  ctx_.log().info("reservation {}: created by {} on {} host(s){}", r.name, caller.user,
                  r.hosts.size(), r.maint ? " (MAINT)" : "");
  json answer = ReservationJson(r, windows, ctx_.Now());
  const std::string name = r.name;
  return Commit(lock, name, std::move(r), std::move(answer));
}

Outcome<json> AdvanceReservations::Modify(MutexLock& lock, const Caller& caller,
                                          const std::string& name, const json& body,
                                          const config::UserReservationPolicy& policy) {
  if (!ctx_.writes().Writable()) {
    return Status(StatusCode::kUnavailable, "not leading: the store cannot be written");
  }
  auto it = records_.find(name);
  if (it == records_.end()) return NotFound(NotFoundText(name));
  const ReservationRecord old = it->second;
  Result<ReservationRecord> parsed = ParseReservation(body, ReservationBodyKind::kModify, &old);
  if (!parsed) return parsed.error();
  ReservationRecord r = std::move(*parsed);
  if (r.users.empty() && r.groups.empty()) r.users = {r.creator};
  std::vector<WallSpan> windows;
  SLUICE_RETURN_IF_ERROR(Admit(caller, r, &old, policy, windows));
  ctx_.log().info("reservation {}: modified by {}", name, caller.user);
  json answer = ReservationJson(r, windows, ctx_.Now());
  return Commit(lock, name, std::move(r), std::move(answer));
}

Outcome<json> AdvanceReservations::Delete(MutexLock& lock, const Caller& caller,
                                          const std::string& name,
                                          const config::UserReservationPolicy& policy) {
  if (!ctx_.writes().Writable()) {
    return Status(StatusCode::kUnavailable, "not leading: the store cannot be written");
  }
  auto it = records_.find(name);
  if (it == records_.end()) return NotFound(NotFoundText(name));
  if (!caller.admin) {
    // Their own, while the policy still lets them make reservations.
    std::vector<WallSpan> windows;
    SLUICE_RETURN_IF_ERROR(Authorize(caller, it->second, policy, windows));
  }
  ctx_.log().info("reservation {}: deleted by {}; its waiting jobs wait", name, caller.user);
  return Commit(lock, name, std::nullopt, json{{"deleted", name}});
}

json AdvanceReservations::List() const {
  json list = json::array();
  const Instant now = ctx_.Now();
  for (const auto& [name, r] : records_) {
    auto w = windows_.find(name);
    list.push_back(
        ReservationJson(r, w == windows_.end() ? std::vector<WallSpan>{} : w->second, now));
  }
  return json{{"reservations", std::move(list)}};
}

Outcome<json> AdvanceReservations::Get(const std::string& name) const {
  auto it = records_.find(name);
  if (it == records_.end()) return NotFound(NotFoundText(name));
  auto w = windows_.find(name);
  return ReservationJson(it->second, w == windows_.end() ? std::vector<WallSpan>{} : w->second,
                         ctx_.Now());
}

// --- Jobs ---------------------------------------------------------------------------------------

Status AdvanceReservations::CheckSubmitter(const Caller& caller, const std::string& name,
                                           const std::string& where) const {
  auto it = records_.find(name);
  if (it == records_.end()) {
    return InvalidArgument(where + ".reservation: " + NotFoundText(name));
  }
  const ReservationRecord& r = it->second;
  if (std::find(r.users.begin(), r.users.end(), caller.user) != r.users.end()) {
    return Status::Ok();
  }
  if (!r.groups.empty()) {
    const std::string account = caller.account.empty() ? caller.user : caller.account;
    for (const std::string& group : UnixGroupsOf(account)) {
      if (std::find(r.groups.begin(), r.groups.end(), group) != r.groups.end()) {
        return Status::Ok();
      }
    }
  }
  auto join = [](const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
    return text.empty() ? std::string("none") : text;
  };
  return Status(StatusCode::kPermissionDenied, where + ".reservation: user " + caller.user +
                                                   " may not run jobs in reservation " + name +
                                                   " (its users: " + join(r.users) +
                                                   "; its groups: " + join(r.groups) + ")");
}

namespace {

// The wall end (window end + overrun) that bounds a job of `r` started at `start`, if any.
std::optional<Instant> WindowBound(const ReservationRecord& r, const std::vector<WallSpan>& windows,
                                   Instant start) {
  for (const WallSpan& w : windows) {
    if (w.begin <= start && start < w.end) return w.end + r.overrun;  // the one it started in
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> AdvanceReservations::RunLimitOf(const JobInfo& job) const {
  std::optional<int64_t> own;
  if (job.run_limit > 0) own = job.run_limit;
  const std::string name = job.reservation.str();
  auto it = records_.find(name);
  if (name.empty() || it == records_.end() || job.row.start_time == 0) return own;
  auto w = windows_.find(name);
  if (w == windows_.end()) return own;
  std::optional<Instant> bound = WindowBound(it->second, w->second, job.row.start_time);
  if (!bound) return own;
  const int64_t left = std::max<int64_t>(1, *bound - job.row.start_time);
  return own ? std::min(*own, left) : left;
}

std::string AdvanceReservations::WindowEndMessage(const JobInfo& job) const {
  std::optional<int64_t> own;
  if (job.run_limit > 0) own = job.run_limit;
  const std::optional<int64_t> limit = RunLimitOf(job);
  if (!limit || (own && *own <= *limit)) return "";
  const std::string name = job.reservation.str();
  const ReservationRecord& r = records_.at(name);
  return "ended at the end of reservation " + name +
         "'s window (t=" + std::to_string(job.row.start_time + *limit - r.overrun) + ", overrun " +
         std::to_string(r.overrun) + " s)";
}

void AdvanceReservations::ResendRunLimits(const std::string& name) {
  for (const auto& [id, job] : book_.jobs()) {
    if (!job->HoldsAllocation() || job->launch().launch_host.empty()) continue;
    const std::string in = job->reservation.str();
    if (in.empty() || (!name.empty() && in != name)) continue;
    job->run_limit_pending = true;
    book_.NoteRunLimitOrder(*job);
    ctx_.wakeups().Mark(job->launch().launch_host);
  }
}

json AdvanceReservations::OnHost(const std::string& host) const {
  json out = json::array();
  for (const auto& [name, r] : records_) {
    if (std::find(r.hosts.begin(), r.hosts.end(), host) == r.hosts.end()) continue;
    auto w = windows_.find(name);
    if (w == windows_.end()) continue;
    for (const WallSpan& span : w->second) {
      if (span.end <= ctx_.Now()) continue;  // in its overrun only
      out.push_back({{"name", name}, {"begin", span.begin}, {"end", span.end}});
      break;
    }
  }
  return out;
}

}  // namespace sluice::server
