// AdvanceReservations: the controller's advance reservations (issue 42, SPEC §19 R-RSV-1,
// R-RSV-2; docs/reservations.md): the records administrators and users made through
// /v1/reservations, their rules of creation, the windows the core plans with, and what a
// reservation does to the jobs around it.
//
// Representation: records_ holds every reservation by name (name order: listings and the
// core's set are deterministic); windows_ the windows each had when last published (the
// current or next ones, at most kMaxWindows, wall time). Publish() hands the whole set to the
// core (core::ReservationsChanged), in core time: on restore, on every change and when a
// recurring reservation needs its next windows (RefreshIfDue, at the end of its first window,
// and at least hourly).
// Rules of a create or modify (Admit), in order, each with its answer:
//   1. who: an administrator; else a user whom the `reservations.user_reservations` policy
//      admits, for a reservation of their own within its max_hosts and max_duration, without
//      MAINT or IGNORE_JOBS (kPermissionDenied);
//   2. the hosts: named ones exist (kInvalidArgument); for `slots`, PickHosts chooses them
//      (kFailedPrecondition when too few match);
//   3. the windows: a window ahead (kInvalidArgument for one already past);
//   4. no overlap with another reservation on a common host unless either is MAINT
//      (kFailedPrecondition);
//   5. without ignore_jobs, no running job on its hosts would still run, by its run limit,
//      when it begins (kFailedPrecondition listing them);
//   6. the core takes the new set (else kFailedPrecondition; nothing changed).
// A job in a reservation runs at most until its window's end + the overrun: RunLimitOf gives
// the run limit its agent enforces (the smaller of its own and that end, counted from its
// start), so it ends as a run limit ends it, with WindowEndMessage naming the reservation.
// Thread-safety: every method REQUIRES the context's mutex held; Create, Modify and Delete wait
// for the store's commit with it released (WriteAndWait), Preview runs its forecasts without it.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/cluster_yaml.h"
#include "server/context.h"
#include "server/job_book.h"
#include "server/outcome.h"
#include "server/reservation_record.h"
#include "store/store.h"

namespace sluice::server {

class AdvanceReservations {
 public:
  AdvanceReservations(ServerContext& ctx, JobBook& book) : ctx_(ctx), book_(book) {}

  // --- Restart and takeover ---
  // The stored rows (by name); a row that does not decode is logged and left out.
  void Restore(const std::map<std::string, std::string>& rows);
  // Every record's row, and deletes of the ones deleted in this process (the resync).
  void AddRows(store::WriteBatch& batch) const;

  // --- Requests (docs/reservations.md, "REST API and storage") ---
  Outcome<nlohmann::json> Create(MutexLock& lock, const Caller& caller, const nlohmann::json& body,
                                 const config::UserReservationPolicy& policy);
  Outcome<nlohmann::json> Modify(MutexLock& lock, const Caller& caller, const std::string& name,
                                 const nlohmann::json& body,
                                 const config::UserReservationPolicy& policy);
  Outcome<nlohmann::json> Delete(MutexLock& lock, const Caller& caller, const std::string& name,
                                 const config::UserReservationPolicy& policy);
  nlohmann::json List() const;
  Outcome<nlohmann::json> Get(const std::string& name) const;
  // The running jobs the reservation of `body` would find in its way and the pending jobs it
  // would delay (estimated starts with and without it); nothing is stored.
  Outcome<nlohmann::json> Preview(MutexLock& lock, const Caller& caller, const nlohmann::json& body,
                                  const config::UserReservationPolicy& policy);

  // --- Jobs ---
  // Whether `caller` may submit a job to reservation `name` (its users, or a member of its
  // groups as the controller's host resolves the job's account). Errors: kInvalidArgument
  // "WHERE.reservation: no reservation named 'X'"; kPermissionDenied naming who may.
  Status CheckSubmitter(const Caller& caller, const std::string& name,
                        const std::string& where) const;
  // The run limit (seconds from its start) `job`'s agent enforces: its own, or less when its
  // reservation's window ends (+ overrun) first; nullopt: none.
  std::optional<int64_t> RunLimitOf(const JobInfo& job) const;
  // Why a job that ended by its run limit ended: "" when its own limit did it, else the
  // sentence naming its reservation's window end.
  std::string WindowEndMessage(const JobInfo& job) const;
  // Every running job in reservation `name` (all when empty) gets its run limit again.
  void ResendRunLimits(const std::string& name);

  // --- Time ---
  // Re-expands the recurring reservations' windows once their first window ended (or an hour
  // passed), and publishes.
  void RefreshIfDue();
  // GET /v1/hosts: `host`'s reservations, each with its current or next window.
  nlohmann::json OnHost(const std::string& host) const;

 private:
  struct Running {
    JobId id;
    std::string user;
    std::vector<std::string> hosts;
    std::optional<Instant> end;
  };
  // The core's set from records_ as of now (windows_ refreshed); the core's answer.
  Status Publish();
  // Steps 1-5 of the header for `r` (creator set) replacing `old` (null: new); fills
  // `windows`. Without `refuse_running`, step 5 is left out (the preview lists them).
  Status Admit(const Caller& caller, ReservationRecord& r, const ReservationRecord* old,
               const config::UserReservationPolicy& policy, std::vector<WallSpan>& windows,
               bool refuse_running = true);
  Status Authorize(const Caller& caller, const ReservationRecord& r,
                   const config::UserReservationPolicy& policy,
                   const std::vector<WallSpan>& windows) const;
  Status ResolveHosts(ReservationRecord& r, const std::vector<WallSpan>& windows) const;
  Status CheckOverlap(const ReservationRecord& r, const std::vector<WallSpan>& windows) const;
  // The running jobs on r's hosts (not in r) whose run-limit end is after `from`.
  std::vector<Running> RunningInto(const ReservationRecord& r, Instant from) const;
  // Stores `r` (nullopt: deletes `name`), applies to the core, answers `answer`.
  Outcome<nlohmann::json> Commit(MutexLock& lock, const std::string& name,
                                 std::optional<ReservationRecord> r, nlohmann::json answer);
  core::AdvanceReservationSpec CoreSpec(const ReservationRecord& r,
                                        const std::vector<WallSpan>& windows) const;

  ServerContext& ctx_;
  JobBook& book_;
  std::map<std::string, ReservationRecord> records_;
  std::map<std::string, std::vector<WallSpan>> windows_;
  std::set<std::string> deleted_;  // deleted in this process (the resync deletes them again)
  Instant next_refresh_ = 0;
};

}  // namespace sluice::server
