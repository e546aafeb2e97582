// AdvanceReservations::Preview (advance_reservations.h): what a reservation would do before
// it is made. Steps: 1. under the lock, the record checked as a create would be (but the
// running jobs, which are the answer) and two clones of the core's state, one given the
// reservation; 2. without the lock, the forecast on each (the estimator's, estimates.h);
// 3. under the lock again, the pending jobs whose estimated start moves later.
#include <chrono>

#include "core/driver/forecast.h"
#include "server/advance_reservations.h"
#include "server/estimates.h"

namespace sluice::server {

using nlohmann::json;

namespace {

constexpr const char* kPreviewName = "(preview)";  // no reservation's name has parentheses

// A start for comparing: unknown is never.
Instant StartOf(const std::map<JobId, core::StartEstimate>& estimates, JobId id) {
  auto it = estimates.find(id);
  return it == estimates.end() || !it->second.start ? kInfinite : *it->second.start;
}

json TimeJson(Instant t, Instant offset) {
  return t == kInfinite ? json(nullptr) : json(t + offset);
}

}  // namespace

Outcome<json> AdvanceReservations::Preview(MutexLock& lock, const Caller& caller, const json& body,
                                           const config::UserReservationPolicy& policy) {
  // 1.
  Result<ReservationRecord> parsed = ParseReservation(body, ReservationBodyKind::kPreview, nullptr);
  if (!parsed) return parsed.error();
  ReservationRecord r = std::move(*parsed);
  if (r.name.empty()) r.name = kPreviewName;
  r.creator = caller.user;
  if (r.users.empty() && r.groups.empty()) r.users = {caller.user};
  const ReservationRecord* old = nullptr;
  if (auto it = records_.find(r.name); it != records_.end()) old = &it->second;
  std::vector<WallSpan> windows;
  // The running jobs in the way are the answer here, not a refusal.
  SLUICE_RETURN_IF_ERROR(Admit(caller, r, old, policy, windows, /*refuse_running=*/false));
  json running = json::array();
  if (!windows.empty()) {
    for (const Running& job : RunningInto(r, windows.front().begin)) {
      running.push_back({{"id", job.id},
                         {"user", job.user},
                         {"hosts", job.hosts},
                         {"end", job.end ? json(*job.end) : json(nullptr)}});
    }
  }
  core::ClusterState without = ctx_.state().Clone();
  core::ClusterState with = ctx_.state().Clone();
  std::vector<core::AdvanceReservationSpec> specs;
  for (const auto& [name, other] : records_) {
    if (name == r.name) continue;
    auto w = windows_.find(name);
    specs.push_back(CoreSpec(other, w == windows_.end() ? std::vector<WallSpan>{} : w->second));
  }
  specs.push_back(CoreSpec(r, windows));
  if (Status s = with.SetReservations(std::move(specs)); !s.ok()) {
    return FailedPrecondition(s.message());
  }
  const Instant now = ctx_.Now();
  const Instant offset = ctx_.state().config().epoch_offset;
  // 2.
  lock.unlock();
  const core::EstimateOptions options{.cycle_at_now = true, .coarse_fraction = kCoarseFraction};
  const auto before =
      core::EstimateStartsOn(std::move(without), now - offset, std::nullopt, options);
  const auto after = core::EstimateStartsOn(std::move(with), now - offset, std::nullopt, options);
  lock.lock();
  // 3.
  json delayed = json::array();
  for (const auto& [id, estimate] : before) {
    const Instant start = StartOf(before, id);
    const Instant start_with = StartOf(after, id);
    if (start_with <= start) continue;
    const JobInfo* job = book_.Find(id);
    delayed.push_back({{"id", id},
                       {"user", job != nullptr ? job->user.str() : ""},
                       {"estimated_start", TimeJson(start, offset)},
                       {"estimated_start_with", TimeJson(start_with, offset)}});
  }
  return json{{"running", std::move(running)}, {"delayed", std::move(delayed)}};
}

}  // namespace sluice::server
