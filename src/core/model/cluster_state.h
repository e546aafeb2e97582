// ClusterState: everything the scheduling core knows — hosts, queues and jobs — kept
// incrementally between cycles (events and committed decisions update it in place).
//
// It is the job table and the lifecycle of jobs (and of job arrays, whose elements become
// jobs) over four parts it owns, each with one job and its own contract, handed out read-only:
//  - topology():     hosts, queues, resources and what of them is in use (topology.h);
//  - requests():     compiled resource requests and their memos (request_catalog.h);
//  - dependencies(): dependency verdicts and ended jobs outside the table
//                    (dependency_tracker.h);
//  - usage():        named-limit and fairshare usage, runtime history (usage_ledger.h).
// Callers read a concern through its part (`state.topology().hosts()`); ClusterState forwards
// none of the parts' reads. Every change goes through ClusterState, which keeps the parts
// consistent with each other and with the jobs (a new host resets the request memos, a start
// charges the limits, a job's change of state re-evaluates its dependents); the one exception
// is a study's table of true runtimes (runtime_history_for_study).
//
// Representation:
//  - jobs_ maps JobId to Job; it is node-based so Job pointers stay valid for the job's life.
//    It is never iterated where order matters (R-ARCH-2): ordered views are the per-queue
//    pending sets (queue order, R-ADM-2) and the running set (start order).
// Invariants (checked by tests/property): a host's used slots equal the sum of the grants of
// the jobs running on it and never exceed its slots; every PENDING/HELD job is in exactly one
// queue's pending set; every RUNNING/ADMITTING job is in running_.
// Thread-safety: none; the drivers own the state and call into it from one thread.
// Implements the model of SPEC §2.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/array_ids.h"
#include "base/ids.h"
#include "base/status.h"
#include "base/time.h"
#include "core/model/advance_reservation.h"
#include "core/model/config.h"
#include "core/model/dependency.h"
#include "core/model/dependency_tracker.h"
#include "core/model/fairshare_usage.h"
#include "core/model/job.h"
#include "core/model/job_array.h"
#include "core/model/limit_usage.h"
#include "core/model/pending_set.h"
#include "core/model/request_catalog.h"
#include "core/model/running_list.h"
#include "core/model/runtime_history.h"
#include "core/model/topology.h"
#include "core/model/usage_ledger.h"
#include "core/model/window.h"
#include "core/resreq/eval.h"
#include "core/resreq/expr.h"
#include "core/resreq/request.h"

namespace sluice::core {

// The same running jobs by estimated end (Job::EstimatedEnd), then start order: EASY's
// reservation walks them from the earliest end instead of sorting them every cycle.
struct RunningByEnd {
  Instant end = 0;
  uint64_t start_seq = 0;
  int32_t slots = 0;  // the allocation's total slots

  friend bool operator<(const RunningByEnd& a, const RunningByEnd& b) {
    if (a.end != b.end) return a.end < b.end;
    return a.start_seq < b.start_seq;
  }
};

// The fewest slots an alternative of `request` can run with: a compound's counts are fixed; a
// plain primary (count 0) takes the job's task range (R-RR-6).
int32_t MinSlots(const resreq::Request& request, const JobSpec& spec);

class ClusterState {
 public:
  // Builds the state of a cluster with no jobs. Fails on duplicate host or queue names and
  // queues naming unknown host groups (the YAML loader reports these with line numbers
  // first; this is the last line of defence for configs built in code).
  static Result<ClusterState> Create(const ClusterConfig& config);

  ClusterState(ClusterState&&) = default;
  ClusterState& operator=(ClusterState&&) = default;
  // An independent deep copy (estimated start times run the core forward on one, R-PR-2):
  // its own expression pool, compiled requests and jobs, every pointer re-linked; the
  // request memos start empty. O(jobs + requests + hosts).
  ClusterState Clone() const;
  // The same copy with at most `waiting_per_queue` waiting (PENDING or HELD) jobs of each
  // queue, the first in queue order (issue 45: a forecast over a million waiting jobs cost a
  // copy of them all under the controller's lock, and its estimates far down a queue mean
  // little; Slurm's backfill tests its first bf_max_job_test jobs the same way). Kept besides
  // them: the running and admitting jobs, the jobs preemptions are under way for, every array
  // element that is a Job (its array's record counts on it), and the jobs kept jobs'
  // dependencies name (a waiting one outside every queue: no cycle of the copy considers it,
  // so those dependencies keep reading it as it is). NOTE: the copy breaks the invariant
  // that every waiting job is in its queue's pending set; it is for forecasts only.
  // O(kept jobs + requests + hosts), plus a flat copy of the queues' pending entries (24
  // bytes a waiting job, with the topology), of the dependency tracker and of the arrays.
  ClusterState CloneFirstWaiting(size_t waiting_per_queue) const;

  const ClusterConfig& config() const { return config_; }
  // Wall-clock seconds at core time `t` (ClusterConfig::epoch_offset).
  Instant WallTime(Instant t) const { return AddDuration(t, config_.epoch_offset); }

  // --- The parts (read-only). ---

  const Topology& topology() const { return topology_; }
  const RequestCatalog& requests() const { return requests_; }
  const DependencyTracker& dependencies() const { return dependencies_; }
  const UsageLedger& usage() const { return usage_; }
  // The advance reservations (R-RSV-1, advance_reservation.h).
  const ReservationBook& reservations() const { return reservations_; }

  // --- Jobs. ---

  const Job* FindJob(JobId id) const;
  int64_t job_count() const { return static_cast<int64_t>(jobs_.size()); }
  // The job is in the table or ended outside it (a dependency may name it).
  bool Knows(JobId id) const {
    return jobs_.contains(id) || dependencies_.HasEnded(id) ||
           (!arrays_.empty() && KnowsArrayPart(id));
  }
  const RunningList& running() const { return running_; }  // in start order
  const std::set<RunningByEnd>& running_by_end() const { return running_by_end_; }
  // Study only (`sluice sim --oracle-runtimes`): to fill the runtime history's table of true
  // runtimes (usage().runtimes()).
  RuntimeHistory& runtime_history_for_study() { return usage_.runtimes_for_study(); }
  // Jobs no cycle has classified yet (arrived since the last commit), in arrival order.
  const std::vector<JobId>& unclassified() const { return unclassified_; }
  // The earliest begin time after `now` of a waiting job, if any (a timer for the cycle).
  std::optional<Instant> NextBeginAfter(Instant now) const {
    auto it = future_begins_.upper_bound({now, std::numeric_limits<JobId>::max()});
    if (it == future_begins_.end()) return std::nullopt;
    return it->first;
  }

  // Preemptions in progress (R-CAP-3, R-CAP-4), by the job slots are being freed for
  // (ordered by job id): its victims (some may have exited already) and the hosts they ran
  // on, which are kept for it until it starts.
  struct Preemption {
    std::vector<JobId> victims;
    std::vector<HostIndex> hosts;  // sorted, unique
  };
  const std::map<JobId, Preemption>& preemptions() const { return preemptions_; }

  // --- Job arrays (R-UX-3; job_array.h, docs/design/arrays.md). ---

  const JobArray* FindArray(JobId id) const;
  const std::map<JobId, JobArray>& arrays() const { return arrays_; }
  // The state of array element `id`: its Job's when it is one, else the array's record
  // (PENDING, HELD or ended); nullopt when there is no such array or index.
  std::optional<JobState> ElementStateOf(JobId id) const;

  // --- Mutations. Apply() (events) and Commit() (decisions) are the only callers. ---

  // Cancels, or holds/releases, every element of `array` with an index in [first, last]
  // that is in a state the change applies to (others are left as they are).
  // Errors: kNotFound for an unknown array or a range without elements;
  // kFailedPrecondition when no element in the range could change.
  Status CancelElements(JobId array, int32_t first, int32_t last, Instant now);
  Status SetElementsHeld(JobId array, int32_t first, int32_t last, bool held);
  // Turns the next waiting elements of each array into Jobs, as many as could start now
  // (capped by `%N` and the free slots), and marks the ones the cap holds back
  // (Job::array_limited). Apply and Commit call it after every change; O(open arrays)
  // plus the elements it creates.
  void RefillArrays();
  // A controller restart: the array with its elements' stored states. Positions stored
  // as kQueued must each be restored as a Job (Restore with the element's id and
  // sequence base_seq + position); waiting ones become Jobs as RefillArrays needs them.
  // Errors: as Submit; kInvalidArgument when `states` does not match the array's size.
  Status RestoreArray(JobSpec spec, const std::string& array, uint64_t base_seq,
                      std::vector<ElementState> states);
  // Adds job array `spec.id` with the indices and cap of `array` ("1-1000%50", job_array.h);
  // no element is a Job until RefillArrays makes it one. Errors: as Submit, and
  // kInvalidArgument for a bad `array` or an id above kMaxArrayJobId.
  Status SubmitArray(const JobSpec& spec, const std::string& array);

  // Adds a PENDING job (HELD when spec.hold) at the tail of its queue's order.
  // Errors: kAlreadyExists for a reused id, kNotFound for an unknown queue,
  // kInvalidArgument for a task range that is empty or not positive, or a dependency
  // expression that does not parse. A dependency naming a job this state does not hold is
  // not an error here (the job may have been purged: the atom is `never`); a new submission
  // is refused for it by Apply(JobSubmitted), as are submissions to closed queues.
  // The spec is moved into the job table once (a JobSpec holds seven strings, and a trace
  // replay submits 200,000 of them); the const form copies it there.
  Status Submit(JobSpec&& spec);
  Status Submit(const JobSpec& spec) { return Submit(JobSpec(spec)); }
  // Parses and checks a request against this cluster's resources, interning it (see
  // RequestCatalog::Compile). Errors: kInvalidArgument with the column or the offending name.
  Result<const resreq::Request*> CompileRequest(const std::string& text) {
    return requests_.Compile(text);
  }
  // Opens/closes (submissions) and activates/inactivates (dispatch) a queue; unset fields
  // stay. Errors: kNotFound for an unknown queue.
  Status SetQueueStatus(std::string_view queue, std::optional<bool> open,
                        std::optional<bool> active);
  // Ends a PENDING/HELD job as CANCELLED (R-ADM-4), or a RUNNING job (its slots are released).
  Status Cancel(JobId id, Instant now);
  // Ends a RUNNING job: DONE when exit_code is 0 and cause kNone, EXIT otherwise. With
  // `lost_run`, a PENDING or HELD one instead: its run, requeued with its lost host, was then
  // reported ended by that host (JobFinished::lost_run).
  Status Finish(JobId id, Instant now, int32_t exit_code, ExitCause cause, bool lost_run = false);
  // REQUIRES: the job is PENDING and the allocation fits the hosts' free slots.
  // Returns the started job (a commit reads its queue without a second lookup).
  const Job& Start(JobId id, Allocation allocation, Instant now);
  // REQUIRES: the job is PENDING or HELD.
  void Fail(JobId id, ExitCause cause, Instant now);
  // Errors: kNotFound for an unknown host.
  Status SetHostState(std::string_view host, HostState state);
  // Errors: as Topology::AddHost.
  Status AddHost(HostSpec spec);
  // Replaces the configuration: hosts and queues may be added or changed; a queue may not be
  // removed while it still has jobs; a host removed while it runs jobs is closed and drains
  // (HostMembership: its jobs run to their end, then it is gone; listed again before, it is
  // back as configured). Every pending job is classified again in the next cycle, and again
  // when a draining host is gone.
  // Validates and plans first (Topology::PlanReconfigure, whose errors it returns); a refused
  // configuration changes nothing, an accepted one is applied whole.
  Status Reconfigure(const ClusterConfig& config);
  // Replaces the advance reservations. Errors: as ReservationBook::Set (nothing changes).
  Status SetReservations(std::vector<AdvanceReservationSpec> reservations) {
    return reservations_.Set(std::move(reservations), topology_);
  }
  void MarkClassified();
  // Makes room for `n` jobs in all, so the job table is not rebuilt as it grows (a driver
  // that knows its workload, like the simulator, calls it once).
  void ReserveJobs(size_t n) { jobs_.reserve(n); }

  // --- Server support (R-SRV-2): restore from the store, requeue, hold/release. ---

  // Adds a job through the same path as Submit (same checks, same request compilation) but
  // with the enqueue sequence and admission record it had when it was stored, so a
  // restarted controller orders it where it was. Later Submits get sequences after it.
  // Errors: as Submit; kAlreadyExists when the sequence is taken in its queue.
  Status Restore(JobSpec spec, uint64_t seq, const AdmissionRecord& record);
  // Puts a RUNNING/ADMITTING job back into its queue at its original sequence, releasing
  // its slots; its admission record (bypass count, first-blocked time, gate) is kept.
  // Errors: kNotFound, kFailedPrecondition when the job does not hold an allocation.
  Status Requeue(JobId id);
  // PENDING -> HELD (held) or HELD -> PENDING (!held); the job keeps its place.
  // Errors: kNotFound, kFailedPrecondition from any other state.
  Status SetHeld(JobId id, bool held);

  // Ended jobs outside the job table. Dependencies that name one keep the verdict its end
  // gave (`done(5)` stays satisfied after job 5 is gone). NoteEnded records a job that ended
  // before a restart (the server restores only jobs that had not ended); Forget drops an
  // ended job from the table, keeping only that outcome (the server's retention of
  // finished jobs). Errors: kInvalidArgument when `state` is not terminal; for Forget,
  // kNotFound, kFailedPrecondition when the job has not ended.
  Status NoteEnded(JobId id, JobState state, bool started);
  Status Forget(JobId id);
  // Takes back a job that was submitted but never acknowledged (a refused batch), as if it
  // had never been submitted. Errors: kNotFound; kFailedPrecondition unless it is PENDING or
  // HELD and never started.
  Status Withdraw(JobId id);

  // --- Changes in place (R-UX-7; job_changes.cc). ---

  // A job as `spec` would make it (request compiled, queue and minimum slots resolved), for
  // checks before a change; not in the table. Errors: as Submit's for the spec.
  Result<Job> Candidate(const JobSpec& spec);
  // Replaces a PENDING/HELD job's spec (see JobModified). Errors: kNotFound;
  // kFailedPrecondition when it is not waiting; as Submit for the new spec (nothing changed).
  Status Modify(JobSpec spec, Instant now);
  // Errors: kNotFound; kFailedPrecondition unless ADMITTING or RUNNING.
  Status SetRunLimit(JobId id, std::optional<Duration> run_limit);
  // See JobRevived. Errors: kNotFound when the job is neither in the table nor noted ended;
  // kFailedPrecondition when it has not ended; as Restore.
  Status Revive(JobSpec spec, uint64_t seq, Instant now);

  // Preemption bookkeeping, from the cycle's decisions (Commit).
  // REQUIRES for MarkPreempted: the victim is RUNNING or ADMITTING.
  void MarkPreempted(JobId victim, JobId for_job);
  void DropPreemption(JobId for_job) { preemptions_.erase(for_job); }
  void SetReclaimDeadline(QueueIndex queue, std::optional<Instant> deadline) {
    topology_.MutableQueue(queue).reclaim_deadline = deadline;
  }

  // Adds one cycle's admission attempt outcomes to a queue's totals.
  void AddTotals(QueueIndex queue, const AdmissionTotals& delta);
  // Replaces the head fields of a pending job's admission record (UpdateAdmission).
  void UpdateAdmission(JobId id, int32_t bypass_count, std::optional<Instant> first_blocked,
                       std::optional<Instant> gate_since);

 private:
  ClusterState() = default;
  Job* MutableJob(JobId id);
  // Clone's parts other than the jobs, their queue order and the job-keyed indexes.
  ClusterState CloneParts(RequestCatalog::Relink& relink) const;
  // Adds a copy of `job` to this clone's table, its request re-linked.
  Job& AdoptCopy(const Job& job, const RequestCatalog::Relink& relink);
  // Tells the request catalog of the topology's hosts / shared resources.
  void ResetRequestHosts();
  void ResetRequestSharedResources();
  // Gives back the job's allocation. Returns whether a draining host was gone with it: the
  // caller then calls HostGone once the job is where it goes (pending again, or ended).
  bool Release(Job& job);
  // What a reconfiguration does after the hosts changed: requests are matched against the
  // hosts that remain, and every pending job is classified again (R-ADM-1).
  void HostGone();
  void RemovePending(Job& job);
  // Every pending job is classified again (R-ADM-1).
  void ReclassifyPending();
  // Arrays (cluster_state_arrays.cc).
  bool KnowsArrayPart(JobId id) const;
  Result<JobArray> NewArray(const JobSpec& spec, const std::string& array);
  // Keeps the array's counts in step with an element Job's change of state (`from`:
  // nullopt when the Job was just created).
  void NoteElement(Job& job, std::optional<JobState> from) {
    if (!arrays_.empty() && IsArrayElement(job.spec.id)) TrackElement(job, from);
  }
  void TrackElement(Job& job, std::optional<JobState> from);
  void RefillArray(JobArray& array);
  void FlagArrayLimited(JobArray& array, int64_t room);
  void UpdateArrayTarget(const JobArray& array);
  Status CancelArrayPart(JobId id, Instant now);
  Status HoldArrayPart(JobId id, bool held);
  Status WithdrawArray(JobId id);
  Status ForgetArray(JobId id);
  // Elements the dependency names that ended without being Jobs: the tracker learns how.
  void NoteEndedElements(const Dependency& dependency);

  ClusterConfig config_;
  Topology topology_;
  RequestCatalog requests_;
  DependencyTracker dependencies_;
  UsageLedger usage_;
  ReservationBook reservations_;
  JobTable jobs_;
  RunningList running_;
  std::set<RunningByEnd> running_by_end_;  // the same jobs as running_
  std::map<JobId, Preemption> preemptions_;
  std::set<std::pair<Instant, JobId>> future_begins_;  // waiting jobs with a begin time
  std::vector<JobId> unclassified_;
  uint64_t next_seq_ = 1;
  uint64_t next_start_seq_ = 1;
  std::map<JobId, JobArray> arrays_;
  std::set<JobId> open_arrays_;  // arrays with waiting or pending elements
};

}  // namespace sluice::core
