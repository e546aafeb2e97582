// JobBook: the controller's record of every job it knows (R-SRV-1, R-SRV-2, R-SRV-6): the
// stored row and the server-only bookkeeping of each job, the jobs each host launches, the
// mapping of stored rows back into the core at a restart, the transitions a job goes
// through outside a cycle (finish, requeue, confirm, lose), and the retention of ended jobs.
//
// Representation:
//  - jobs_ (by id, ordered): every job's persisted row (JobRow, compact: job_row.h) plus what only the
//    server keeps (launch host, whether its launch may be sent, its last main reason). A
//    listing keeps shared pointers to them across lock releases, so ForgetEnded may drop an
//    entry from the map while a listing still reads it. A B-tree (issue 45): ~30 bytes a job
//    where a std::map's node and a hash index beside it took ~90; a lookup walks ~6 nodes at a
//    million jobs. Its iterators do not survive an insert or erase: listings resume by id.
//  - launched_ (by host name): the ADMITTING/RUNNING jobs whose launch goes to that host
//    (the first host of the allocation, the "mother superior").
//  - ended_by_time_: the ended jobs of jobs_, by when their end was recorded (retention).
// Invariants:
//  - JobInfo's state and phase are the truth; the stored row's state and phase spell them
//    (JobInfo::Stored);
//  - a job that holds an allocation (phase ADMITTING or ADMITTED) is running in the core and
//    is in launched_ under its launch host;
//  - every change of a job in the core goes through core::Apply (ServerContext::ApplyLocked);
//  - each transition adds the job's row to the caller's batch, logs the state change and
//    emits a JobEvent to the listeners.
// Thread-safety: every method REQUIRES the context's mutex held, but the static
// PrepareRestore (any thread: it reads only its arguments).
#pragma once

#include <absl/container/btree_map.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/interned_text.h"
#include "core/driver/forecast.h"
#include "core/model/job.h"
#include "core/model/job_array.h"
#include "core/reasons/reason.h"
#include "server/context.h"
#include "server/job_row.h"
#include "server/job_state.h"
#include "store/store.h"

namespace sluice::server {

// One state transition, for the SSE stream.
struct JobEvent {
  JobId id = 0;
  std::string state;
  std::optional<std::string> reason;
  std::optional<double> cpu_seconds;  // R-SEC-4: once the job's agent reported its end
  std::optional<double> max_rss_mb;
  mutable std::string sse_frame;  // its /v1/events frame, built once for all readers (sse_queue.h)
};

// What a job holds from its first start on (issue 45): a waiting job's record carries one
// pointer for it instead of these 72 bytes. Kept after the job ends (listings show its hosts)
// and across a requeue (the lost run; JobBook::Requeue drops it when nothing is left in it).
struct LaunchRecord {
  std::vector<std::pair<std::string, int32_t>> hosts;  // allocation by host name
  SparseText launch_host;  // first host of the allocation; "" when none
  int64_t launch_sent_ms = -1;  // when the launch was last sent; -1 never (this epoch)
  // Its current run as this leader numbered it (epoch << 40 | n; the launch's `run`, echoed
  // in the exit report, so a late report of an earlier run is not taken for this one's).
  // 0: a run restored from the store, whose number this leader does not know.
  uint64_t run = 0;
  // Since its host was lost (JobBook::Lose, LoseLaunch): that run and host. An exit that host
  // reports for it before the job runs again ends the job (issue 44: a run that completed in a
  // partition is not run twice). Cleared once a later run is confirmed running.
  uint64_t lost_run = 0;
  SparseText lost_host;
  SparseText requeue_by;  // by whom its kill was ordered to requeue it (job_events.h)

  bool empty() const {
    return hosts.empty() && launch_host.empty() && launch_sent_ms < 0 && run == 0 &&
           lost_run == 0 && lost_host.empty() && requeue_by.empty();
  }
};

struct JobInfo {
  // Member order (issue 45): the 8-byte members first, then the 4-byte ones, then the flags,
  // so that the record has no holes: 368 bytes (at most), in its make_shared block of 384
  // (mimalloc's size class; 448 with the started job's members inline, 512 with the spec's
  // text and 16-byte optionals, 640 before).

  // What the store holds (the truth across restarts), compact (job_row.h): Stored() spells it.
  JobRow row;
  // What listings, counts and filters read of the spec on every job, kept compact (issue 45):
  // the parsed tree of the spec (about 2 KB a job as nlohmann::json) is not kept, nor, once
  // stored, its text (job_row.h); JobBook::Spec reads it when a rarer path (a launch, a step, a
  // change, the details) needs the rest.
  InternedText user;
  InternedText account;  // AccountOf(spec): its account, else its user
  InternedText reservation;  // the advance reservation it runs in (R-RSV-2); "" none
  InternedText queue;        // resolved queue name
  int64_t run_limit = 0;     // seconds; 0: none
  std::shared_ptr<const std::string> fixed_text;  // SharedFixedText(spec): listings reuse it
  InternedText main_reason;                     // last main reason logged ("" none)
  SparseText message;                           // why it ended, when it did not end by itself
  // Waiting: the last forecast's estimate (estimates.h); null when it did not cover the job
  // (JobBook::EstimateOf says why). Shared with the listings that copy it.
  std::shared_ptr<const core::StartEstimate> estimate;
  // Where JobBook's counts (JobCounts) have it now: its state, queue, user and wait reason when
  // last counted; an empty state while it is not in the counts.
  // Interned (issue 45): 32 bytes instead of 128 on every job.
  struct CountedAs {
    InternedText state;
    InternedText queue;
    InternedText user;
    InternedText reason;
    bool counted() const { return !state.empty(); }
  } counted_as;

 private:
  core::PendingReasons reasons_;  // reasons()

 public:
  int32_t max_tasks = 1;
  bool has_array = false;  // the spec names an array (the array's record, or an element's)
  bool in_core = false;             // the core holds the job (it did not end before this start)
  bool launch_ready = false;        // its ADMITTING row committed: the launch may be sent
  bool from_earlier_epoch = false;  // restored ADMITTING: unresolved until its agent reports
  bool requeue_requested = false;  // its kill was ordered to requeue it (job_changes.h)
  bool run_limit_pending = false;  // its changed run limit is yet to go to its agent
  // Preempted (R-CAP-3, R-CAP-4; the marker is row.preempted_for and row.preempt_kill_at,
  // persisted so that a restart neither forgets why the victim is stopped nor restarts its
  // grace): its agent is told to kill it (SIGTERM, SIGKILL at the kill time) once the marker
  // committed, and its exit requeues it at its original position instead of ending it.
  bool preempt_committed = false;
  // Restored waiting at this start and not explained since: its first main reason goes into
  // the restart's one summary line instead of a line of its own (CycleRunner::OnPend; the
  // reason it had before the restart is not stored, so that first one is no change to log).
  bool restored_waiting = false;

  // Its hosts, launch and runs (LaunchRecord); an empty record when it never started.
  const LaunchRecord& launch() const { return launch_ ? *launch_ : kNoLaunch; }
  LaunchRecord& mutable_launch() {
    if (!launch_) launch_ = std::make_unique<LaunchRecord>();
    return *launch_;
  }
  // Ends the launch of a job that stops holding its allocation (requeued, restarted): its hosts,
  // launch and run number go; the lost run and the requeue's author stay (the record goes when
  // nothing is left in it).
  void EndLaunch();

  // The reasons of the last explained cycle; nullptr before one explained it (or since it
  // last stopped waiting).
  const core::PendingReasons* reasons() const { return explained_ ? &reasons_ : nullptr; }
  void SetReasons(core::PendingReasons reasons) {
    reasons_ = std::move(reasons);
    explained_ = true;
  }
  // Also ends restored_waiting: whatever made the job stop waiting or change, its next reason
  // is a change to log.
  void ClearReasons() {
    reasons_ = {};
    explained_ = false;
    restored_waiting = false;
  }

  // Sets row.spec to `spec`'s text and the compact members above from it.
  void SetSpec(const nlohmann::json& spec);
  // Sets only the compact members from `spec` (row.spec already holds its text).
  void AdoptSpec(const nlohmann::json& spec);

  // The row as the store holds it (row.state and row.phase spelled from state() and phase()).
  store::StoredJob Stored() const;

  JobState state() const { return state_; }
  // ToString(state()) and ToString(phase()) as strings (the API's and the store's texts).
  const std::string& StateText() const;
  const std::string& PhaseText() const;
  core::AdmissionPhase phase() const { return phase_; }
  void SetState(JobState state);
  void SetPhase(core::AdmissionPhase phase);

  bool BeingPreempted() const { return row.preempted_for > 0; }  // the store's "none" is 0
  void ClearPreemption() {
    row.preempted_for = 0;
    row.preempt_kill_at = 0;
    preempt_committed = false;
  }
  // The main reason code of a waiting job (HELD; NEW_JOB until a cycle has explained it);
  // "" when it is not waiting.
  std::string WaitReason() const;
  bool HoldsAllocation() const {
    return phase_ == core::AdmissionPhase::kAdmitting || phase_ == core::AdmissionPhase::kAdmitted;
  }

 private:
  JobState state_ = JobState::kPending;
  core::AdmissionPhase phase_ = core::AdmissionPhase::kPending;
  bool explained_ = false;  // reasons_ holds an explained cycle's reasons
  std::unique_ptr<LaunchRecord> launch_;  // null until it starts (launch())
  static const LaunchRecord kNoLaunch;
};

// A stored row made ready to restore (JobBook::PrepareRestore, on any thread): its record
// built and its spec parsed once, so that restoring it in id order (JobBook::RestorePrepared,
// under the controller's lock) touches only the book and the core (issue 45).
struct RestoringRow {
  JobId id = 0;
  std::string error;   // not restored: why (RestorePrepared logs it)
  bool known = false;  // its state and phase are ones this version knows
  JobState state = JobState::kPending;
  bool ended = false;
  bool started = false;  // an ended one: it had started (dependencies on it read this)
  int64_t end_time = 0;
  // Its record; null when it is not restored (`error`) or is an ended job past the retention
  // (only in the store; noted for the dependencies on it).
  std::shared_ptr<JobInfo> info;
  std::optional<core::JobSpec> spec;  // an unfinished job's but an array's: JobRestored's
  core::AdmissionRecord record;       // beside `spec`
  nlohmann::json array_spec;          // an unfinished array's own record: its spec
  core::ElementState element_state = core::ElementState::kQueued;  // an array element's
  // Its submission's idempotency tag and user when submitted within the keys' time to live
  // (IdempotencyKeys::NoteRestored), else null.
  nlohmann::json idempotency;
  std::string user;
  int64_t submit_time = 0;
};

// The jobs by (state, queue), the waiting jobs by (main reason, queue) and the jobs by
// (user, state): the /metrics gauges sluice_jobs, sluice_pending_reasons and sluice_user_jobs.
// An array's own record is left out: its elements are the jobs (R-UX-3). Keys with no job are
// absent.
struct JobCounts {
  std::map<std::pair<std::string, std::string>, int64_t> by_state;   // (state, queue)
  std::map<std::pair<std::string, std::string>, int64_t> by_reason;  // (reason, queue)
  std::map<std::pair<std::string, std::string>, int64_t> by_user;    // (user, state)
  bool operator==(const JobCounts&) const = default;
};

// Whether a record drops its spec's text once a write carrying it committed (issue 45): the
// store serves specs by id and keeps every row a record outlives (job_book.cc).
bool DropsStoredSpecs(const ServerContext& ctx);

class JobBook {
 public:
  using Jobs = absl::btree_map<JobId, std::shared_ptr<JobInfo>>;

  explicit JobBook(ServerContext& ctx) : ctx_(ctx) {}

  // --- Records ---
  JobInfo* Find(JobId id);
  const Jobs& jobs() const { return jobs_; }
  // A fresh id (ids are never reused, even for a refused batch or one whose write failed:
  // the resync stores the next id under kNextIdSetting, and Restore starts from it).
  JobId TakeId() { return next_id_++; }
  JobId next_id() const { return next_id_; }
  void SkipIdsBelow(JobId next) { next_id_ = std::max(next_id_, next); }
  static constexpr std::string_view kNextIdSetting = "next_job_id";
  void Add(std::shared_ptr<JobInfo> job);
  // Takes back a submission that was never acknowledged (JobWithdrawn).
  void Withdraw(JobId id);
  // The ADMITTING/RUNNING jobs whose launch goes to `host`.
  const std::set<JobId>& LaunchedBy(const std::string& host) const;
  // Records a started job's hosts (allocation by name) and indexes it under its launch host.
  void SetHosts(JobInfo& job, std::vector<std::pair<std::string, int32_t>> hosts);
  // A job's run limit changed while it holds an allocation (job.run_limit_pending): its launch
  // host has an order to send. TakeRunLimitHost says whether `host` has one and forgets it, so
  // every heartbeat reply need not walk the host's jobs for the flag (TakeRunLimitOrders).
  void NoteRunLimitOrder(const JobInfo& job);
  bool TakeRunLimitHost(const std::string& host) { return run_limit_hosts_.erase(host) > 0; }
  bool HasRunLimitOrder(const std::string& host) const { return run_limit_hosts_.contains(host); }
  // What bounds a running job besides its own run limit (advance reservations end their jobs
  // with the window, advance_reservations.h): the limit its agent enforces, in seconds from its
  // start (nullopt: none), and why a job that reached it ended ("": its own limit did it).
  struct RunLimitSource {
    std::function<std::optional<int64_t>(const JobInfo&)> limit;
    std::function<std::string(const JobInfo&)> end_message;
  };
  void SetRunLimitSource(RunLimitSource source) { run_limit_source_ = std::move(source); }
  // The run limit `job`'s agent enforces, as launches and run-limit orders carry it (null: none).
  nlohmann::json RunLimitOf(const JobInfo& job) const;

  // --- Specs (issue 45) ---
  // A job's spec text: its record's while it holds one, else the store's (a store that serves
  // specs: SQLite). "" when the store cannot read it (logged).
  std::string SpecText(const JobInfo& job) const;
  // SpecText parsed: a discarded value when it is unreadable or not JSON.
  nlohmann::json Spec(const JobInfo& job) const;
  // The row as the store holds it, its spec included (history answers, a revived job).
  store::StoredJob StoredWithSpec(const JobInfo& job) const;
  // Rows carrying their specs committed (StoreWriter::SetSpecsStored): a record that still
  // holds the text written drops it, and reads it from the store from now on. An array's
  // record keeps its own (each element it adds copies it into the element's row).
  void SpecsStored(const std::vector<SpecWritten>& written);

  // --- Restart ---
  // Steps: 1. every row in id order: an ended one is noted for dependencies (EndedJobNoted)
  // and kept only within retention; an unfinished one goes back into the core through the
  // submission path with its stored sequence and admission record (JobRestored); an array's
  // record with its elements' states (ArrayRestored); 2. the allocations of ADMITTING/RUNNING
  // jobs in start order (AllocationRestored, with their preemption markers); one that no
  // longer fits is requeued (its row joins `batch`).
  // A chunk of rows at a time (issue 45): PrepareRestore readies a row on any thread (parses
  // its spec, builds its record; touches neither the book nor the core), RestorePrepared
  // takes the prepared rows in id order, EndRestore does step 2. The rows of array elements
  // (ids above every other job's, base/array_ids.h) come first: RestorePrepared keeps them
  // (their arrays' restores read their states) and EndRestore restores them, in id order,
  // before step 2 — the order of one pass over all rows by id.
  struct RestoreFrame {  // what preparing a row reads: the same for every row of a restart
    Instant now = 0;
    int64_t keep_ended_seconds = 0;
    bool drops_specs = false;  // DropsStoredSpecs
    InternedText default_queue;
  };
  // `noted` sees every row as it is restored, in id order (the controller's own bookkeeping).
  RestoreFrame BeginRestore(std::function<void(const RestoringRow&)> noted);
  static RestoringRow PrepareRestore(store::StoredJob&& row, const RestoreFrame& frame);
  void RestorePrepared(RestoringRow&& row);
  struct Restored {
    size_t holding = 0;                     // jobs that held allocations when stored
    std::vector<std::string> launch_hosts;  // of the jobs that hold them again
  };
  Restored EndRestore(store::WriteBatch& batch);

  // --- Transitions (each adds the row to `batch`) ---
  void SetState(JobInfo& job, JobState state, const std::string& why, store::WriteBatch& batch);
  // A job that held an allocation ended: `cause` "" (by itself), RUN_LIMIT, HOST_LOST or
  // DISPATCH_FAILED; `killed` when its cancel's kill ended it.
  void Finish(JobInfo& job, int32_t exit_code, const std::string& cause, bool killed,
              store::WriteBatch& batch);
  // Back to its queue at its original sequence (a cancelled one ends CANCELLED instead).
  void Requeue(JobInfo& job, const std::string& why, store::WriteBatch& batch);
  // ADMITTING -> RUNNING once its agent reports it runs (a cancelled one only records it).
  void ConfirmRunning(JobInfo& job, const std::string& why, store::WriteBatch& batch);
  // A running job its host lost: requeued or ended HOST_LOST per its queue's on_host_loss.
  void Lose(JobInfo& job, const std::string& why, store::WriteBatch& batch);
  // An ADMITTING job its host was lost with, before the agent reported it running: requeued
  // (it may never have started). Its launch may have reached the agent, though, and the run
  // ended there unreported, so the lost run is remembered as Lose does.
  void LoseLaunch(JobInfo& job, const std::string& why, store::WriteBatch& batch);
  // Copies the core's admission record into the row and adds the row to `batch`.
  void Stage(JobInfo& job, store::WriteBatch& batch);
  // Copies the core's admission record into the row.
  void SyncRow(JobInfo& job);

  // --- Job arrays (job_arrays.h, job_arrays.cc) ---
  // The record of element `id` that the core made a Job, from its array's (Find calls it for
  // an element it does not know yet); nullptr when the core has no such Job.
  JobInfo* AddElement(JobId id);
  // Refreshes array `id`'s row from the core (element states, aggregate state) into `batch`.
  void StageArray(JobId id, store::WriteBatch& batch);

  // --- Retention ---
  // Drops the jobs that ended more than keep_ended_seconds ago (JobForgotten).
  void ForgetEnded();

  // --- Counts (the /metrics job gauges) ---
  // Kept as jobs change (every change of a job's state, queue or wait reason is emitted, and
  // Emit recounts it), so a scrape reads them instead of walking every job under the lock.
  const JobCounts& counts() const { return counts_; }
  // What a scrape reports: counts() plus CountUnrecordedElements.
  JobCounts CountsWithElements() const {
    JobCounts counts = counts_;
    CountUnrecordedElements(counts);
    return counts;
  }
  // The same counts from a walk over every job (tests compare).
  JobCounts CountAll() const;
  // Jobs that ended (DONE, EXIT, CANCELLED) in this process, by (state, queue): /metrics'
  // sluice_jobs_ended_total. Counted when a counted job moves to an ended state, so a job
  // restored already ended is not counted, and one requeued and ended again is counted twice.
  const std::map<std::pair<std::string, std::string>, int64_t>& ended_totals() const {
    return ended_totals_;
  }
  // Slots held by the ADMITTING and RUNNING jobs, by user: a walk over those jobs only.
  std::map<std::string, int64_t> SlotsHeldByUser() const;
  // Adds the unfinished elements of the core's arrays that have no record here yet
  // (job_arrays.cc): not yet Jobs (waiting, held) or Jobs the server has not looked up yet;
  // they wait (PENDING or HELD; reason HELD, else the array's last explained one, else
  // NEW_JOB). A walk over each array's elements, at scrape time only.
  void CountUnrecordedElements(JobCounts& counts) const;
  // The state array `id`'s own object is listed with (issue 47.5; job_arrays.cc): it stands
  // for the elements without an object of their own — PENDING while one of them waits, HELD
  // while those are all held — and is not listed (nullopt) once every element has its own;
  // the elements are the jobs. GET /v1/jobs/ID keeps the aggregate state done(ID) reads.
  std::optional<std::string> ListedArrayState(JobId id) const;

  // --- Start estimates (estimates.h) ---
  // What waiting job `job` shows as its estimated start: the last forecast's; "not estimated
  // yet" when it began waiting since that forecast's copy (NoteNotEstimated); else, when the
  // forecast did not cover it, an unknown one saying why (SetUnestimated).
  std::shared_ptr<const core::StartEstimate> EstimateOf(const JobInfo& job) const;
  // `job` began waiting (submitted, modified, requeued): its estimate is gone until the next
  // forecast. Only remembered while the last forecast's copy left jobs out (ForgetNotEstimated),
  // the one case where it shows something else than "not estimated yet".
  void NoteNotEstimated(JobInfo& job);
  // The forecast's copy was taken, of only part of the waiting jobs when `cut`: the jobs
  // noted so far are in it, or it does not cover them.
  void ForgetNotEstimated(bool cut) {
    forecast_cut_ = cut;
    not_estimated_.clear();
  }
  // What the jobs that forecast did not cover show once it is done: `why` when it was cut,
  // else "not estimated yet".
  void SetUnestimated(bool cut, std::string why);

  // --- Job events (SSE) ---
  int Subscribe(std::function<void(const JobEvent&)> listener);
  void Unsubscribe(int id);
  // Tells the listeners of a change of `job` (state, reason, usage) and recounts it.
  void Emit(JobInfo& job);
  // Called (lock held) when a job gives its allocation back (it ended or is requeued): what
  // runs inside the allocation besides the job (its steps, step_requests.h) must end too.
  void OnReleased(std::function<void(JobId)> released) { on_released_ = std::move(released); }

 private:
  // Restore's step 1 for one prepared row.
  void RestoreRow(RestoringRow&& row);
  // Restore's step 2 for one job; false when it was requeued (its row is in `batch`).
  bool RestoreAllocation(JobInfo& job, store::WriteBatch& batch);
  void Unindex(const JobInfo& job);
  // Moves `job` in counts_ from where it was counted to its current state, queue and reason;
  // Uncount takes it out.
  void Recount(JobInfo& job);
  void Uncount(JobInfo& job);
  // Adds or replaces job `job->row.id` in jobs_; Drop removes it.
  JobInfo* Put(std::shared_ptr<JobInfo> job);
  void Drop(JobId id);
  // ArrayRestored for an unfinished array's own record, its elements' states from its row and
  // its elements' rows (job_arrays.h).
  Status RestoreArrayRow(JobInfo& job, const nlohmann::json& spec);

  ServerContext& ctx_;
  std::function<void(JobId)> on_released_;
  RunLimitSource run_limit_source_;
  JobId next_id_ = 1;
  Jobs jobs_;
  std::unordered_map<std::string, std::set<JobId>> launched_;
  std::unordered_set<std::string> run_limit_hosts_;  // NoteRunLimitOrder's hosts
  std::set<std::pair<Instant, JobId>> ended_by_time_;
  JobCounts counts_;
  std::map<std::pair<std::string, std::string>, int64_t> ended_totals_;
  std::map<int, std::function<void(const JobEvent&)>> listeners_;
  int next_listener_ = 1;
  // During a restart only (BeginRestore to EndRestore):
  std::function<void(const RestoringRow&)> restore_noted_;
  std::vector<RestoringRow> restoring_elements_;  // the array elements' rows, by id
  // Their states by array, as (index, state).
  std::map<JobId, std::vector<std::pair<int32_t, core::ElementState>>> element_states_;
  std::vector<JobInfo*> holding_;  // restored jobs that hold an allocation to restore
  // EstimateOf's answers without an estimate of the job's own.
  const std::shared_ptr<const core::StartEstimate> not_yet_ = std::make_shared<
      const core::StartEstimate>(core::StartEstimate{.unknown_because = "not estimated yet"});
  std::shared_ptr<const core::StartEstimate> unestimated_ = not_yet_;
  bool forecast_cut_ = false;  // the last forecast's copy left waiting jobs out
  std::unordered_set<JobId> not_estimated_;  // NoteNotEstimated's jobs since its copy
};

}  // namespace sluice::server
