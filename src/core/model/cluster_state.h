// ClusterState: everything the scheduling core knows — hosts, queues and jobs — kept
// incrementally between cycles (events and committed decisions update it in place).
//
// Representation:
//  - hosts_ and queues_ are dense vectors addressed by HostIndex / QueueIndex; entries never
//    move or disappear once created (a host that leaves becomes `unavail`).
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

#include "base/ids.h"
#include "base/status.h"
#include "base/time.h"
#include "core/model/config.h"
#include "core/model/dependency.h"
#include "core/model/fairshare_usage.h"
#include "core/model/job.h"
#include "core/model/limit_usage.h"
#include "core/model/pending_set.h"
#include "core/model/runtime_history.h"
#include "core/model/window.h"
#include "core/resreq/eval.h"
#include "core/resreq/expr.h"
#include "core/resreq/request.h"

namespace sluice::core {

struct Host {
  HostSpec spec;
  HostIndex index = 0;
  int32_t used_slots = 0;
  int32_t running_jobs = 0;
  std::vector<int64_t> resource_total;  // by host ResourceId; shorter vectors mean 0
  std::vector<int64_t> resource_used;

  int32_t FreeSlots() const { return spec.slots - used_slots; }
  bool AcceptsWork() const { return spec.state == HostState::kOk; }
  int64_t ResourceTotal(ResourceId id) const {
    return id < resource_total.size() ? resource_total[id] : 0;
  }
  int64_t ResourceUsed(ResourceId id) const {
    return id < resource_used.size() ? resource_used[id] : 0;
  }
  int64_t ResourceFree(ResourceId id) const { return ResourceTotal(id) - ResourceUsed(id); }
  // Slots a grant takes from this host: all of them for an exclusive (whole-host) grant.
  int32_t SlotsTaken(const HostGrant& grant) const {
    return grant.whole_host ? spec.slots : grant.slots;
  }
};

// What committed cycles did in a queue, since the state was created (metrics, R-SRV-4).
struct AdmissionTotals {
  int64_t admitted = 0;                 // jobs started
  int64_t backfilled = 0;               // of which ahead of a blocked head
  int64_t temporarily_unavailable = 0;  // allocation attempts that did not fit
  int64_t unschedulable = 0;            // jobs ended UNSCHEDULABLE
  int64_t preempted = 0;                // running jobs preempted (R-CAP-3, R-CAP-4)

  friend bool operator==(const AdmissionTotals&, const AdmissionTotals&) = default;
};

struct Queue {
  QueueSpec spec;
  AdmissionTotals totals;
  QueueIndex index = 0;
  // The hosts of the queue's host group in host order; empty with all_hosts when it has none.
  std::vector<HostIndex> hosts;
  bool all_hosts = true;
  PendingSet pending;
  int32_t running_jobs = 0;
  int64_t used_slots = 0;
  // R-CAP-3: when this queue, below its guarantee with runnable pending work, reclaims.
  std::optional<Instant> reclaim_deadline;
};

// Every host's slots as a cycle's Capacity starts from them, by HostIndex, kept dense so that
// building one is a copy rather than a walk over the hosts.
struct HostSlots {
  std::vector<int32_t> free;          // free slots; 0 on a host that does not accept work
  std::vector<int32_t> total;         // configured slots
  std::vector<uint8_t> accepts_work;  // Host::AcceptsWork()
  std::vector<uint8_t> idle;          // accepts work and runs no job
};

// Running jobs in start order.
struct RunningEntry {
  uint64_t start_seq = 0;
  Job* job = nullptr;

  friend bool operator<(const RunningEntry& a, const RunningEntry& b) {
    return a.start_seq < b.start_seq;
  }
};

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
  // feasibility memo starts empty. O(jobs + requests + hosts).
  ClusterState Clone() const;

  const ClusterConfig& config() const { return config_; }
  const std::vector<Host>& hosts() const { return hosts_; }
  const HostSlots& host_slots() const { return host_slots_; }
  const std::vector<Queue>& queues() const { return queues_; }
  const std::set<RunningEntry>& running() const { return running_; }
  const std::set<RunningByEnd>& running_by_end() const { return running_by_end_; }
  // Each user's last finished runtimes (predictive_backfill, issue 20); Finish records them.
  const RuntimeHistory& runtime_history() const { return runtime_history_; }
  // Jobs no cycle has classified yet (arrived since the last commit), in arrival order.
  const std::vector<JobId>& unclassified() const { return unclassified_; }

  // Consumable resource names by ResourceId: host resources (mem, gpu, ...) and shared
  // resources (licenses) have separate id spaces. Ids are assigned in order of first
  // appearance and never change.
  const std::vector<std::string>& host_resources() const { return host_resources_; }
  const std::vector<std::string>& shared_resources() const { return shared_resources_; }
  std::optional<ResourceId> FindHostResource(std::string_view name) const;
  std::optional<ResourceId> FindSharedResource(std::string_view name) const;
  int64_t SharedTotal(ResourceId id) const { return shared_total_[id]; }
  int64_t SharedUsed(ResourceId id) const { return shared_used_[id]; }

  // The pool of every select expression of every job (R-RR-4).
  const resreq::ExprPool& expr_pool() const { return *expr_pool_; }
  // Parses and checks a request against this cluster's resources, interning it: the same
  // text always yields the same Request object. Errors: kInvalidArgument with the column
  // (parse) or the offending name (validation).
  Result<const resreq::Request*> CompileRequest(const std::string& text);

  // Whether `host` passes `select`, evaluated through `view` (which must show that host).
  // A verdict that read no free amount on that host depends only on the host's
  // configuration, so it is memoized per (expression, host) until a host is added or
  // changed (R-RR-4: evaluated once, not per job); `type==gpu` on a host whose `type` is
  // text is one (eval.h). Logically const: the memo is invisible to results.
  bool PassesSelect(resreq::ExprId select, HostIndex host, const resreq::HostView& view) const {
    return select == resreq::kNoExpr || PassesSelectSlow(select, host, view);
  }
  // The memoized verdicts of a select, by host: kSelectUnknown (not evaluated yet),
  // kSelectPasses, kSelectFails, or kSelectReadsFree (depends on the host's free amounts:
  // evaluate it each time). PassesSelect fills them in. nullptr for kNoExpr. Valid until a
  // host is added or changed; lets a host scan read one byte per host.
  static constexpr uint8_t kSelectUnknown = 0;
  static constexpr uint8_t kSelectPasses = 1;
  static constexpr uint8_t kSelectFails = 2;
  static constexpr uint8_t kSelectReadsFree = 3;
  const uint8_t* SelectVerdicts(resreq::ExprId select) const;

  // Memo of static feasibility verdicts (R-ADM-1), which depend only on the request, the
  // queue and the configured topology: cleared whenever a host, resource or queue changes.
  // Logically const, like PassesSelect.
  struct FeasibilityKey {
    const resreq::Request* request = nullptr;
    QueueIndex queue = 0;
    bool exclusive = false;
    int32_t min_tasks = 0;
    int32_t max_tasks = 0;
    friend auto operator<=>(const FeasibilityKey&, const FeasibilityKey&) = default;
  };
  struct FeasibilityVerdict {
    bool ok = true;
    std::string why;
  };
  std::map<FeasibilityKey, FeasibilityVerdict>& feasibility_memo() const { return feasibility_memo_; }

  // True when `select`'s verdict depends only on host configuration (no free amounts).
  bool SelectIsStatic(resreq::ExprId select) const;
  // True when `select` tests a free amount as a value: a consumable name that is not merely
  // the word on one side of a comparison with another name (`type==gpu` names the `gpu`
  // resource but tests the word). Static feasibility lets such a select pass every host.
  bool SelectTestsFreeAmounts(resreq::ExprId select) const;

  // Calls fn(HostIndex) for every host the queue may use, in host order.
  template <typename Fn>
  void ForEachHostOf(const Queue& queue, Fn&& fn) const {
    if (!queue.all_hosts) {
      for (HostIndex h : queue.hosts) fn(h);
      return;
    }
    for (HostIndex h = 0; h < hosts_.size(); ++h) fn(h);
  }

  // Preemptions in progress (R-CAP-3, R-CAP-4), by the job slots are being freed for
  // (ordered by job id): its victims (some may have exited already) and the hosts they ran
  // on, which are kept for it until it starts.
  struct Preemption {
    std::vector<JobId> victims;
    std::vector<HostIndex> hosts;  // sorted, unique
  };
  const std::map<JobId, Preemption>& preemptions() const { return preemptions_; }

  // Fairshare (R-Q-4): the decayed past usage of each user in each fairshare queue (runs
  // that ended; running jobs are counted by the cycle).
  const std::map<std::pair<QueueIndex, std::string>, FairshareUsage>& fairshare_usage() const {
    return fairshare_usage_;
  }

  // Named limits (R-Q-2) and what each consumer holds under them now.
  const LimitUsage& limit_usage() const { return limit_usage_; }

  std::optional<HostIndex> FindHost(std::string_view name) const;
  std::optional<QueueIndex> FindQueue(std::string_view name) const;
  // Where a job without a queue goes: default_queue, else the first queue listed.
  QueueIndex default_queue() const { return default_queue_; }
  const Job* FindJob(JobId id) const;

  // The current verdict of a job's dependency (R-Q-3), or nullptr when it has none. Kept up
  // to date as the jobs it names change state (re-evaluated only then), so a cycle reads it
  // in O(1).
  const DependEvaluation* DependencyOf(JobId id) const {
    auto it = depends_.find(id);
    return it == depends_.end() ? nullptr : &it->second.eval;
  }
  // The queue's compiled dispatch windows (R-Q-1), by QueueIndex.
  const DispatchWindows& WindowsOf(QueueIndex queue) const { return windows_[queue]; }
  // Wall-clock seconds at core time `t` (ClusterConfig::epoch_offset).
  Instant WallTime(Instant t) const { return AddDuration(t, config_.epoch_offset); }

  // Slots configured on all hosts, whatever their state (classification capacity, R-ADM-1).
  int64_t total_slots() const { return total_slots_; }
  // Free slots on hosts that accept work.
  int64_t free_slots() const { return free_slots_; }
  int64_t job_count() const { return static_cast<int64_t>(jobs_.size()); }

  // --- Mutations. Apply() (events) and Commit() (decisions) are the only callers. ---

  // Adds a PENDING job (HELD when spec.hold) at the tail of its queue's order.
  // Errors: kAlreadyExists for a reused id, kNotFound for an unknown queue,
  // kInvalidArgument for a task range that is empty or not positive, or a dependency
  // expression that does not parse. A dependency naming a job this state does not hold is
  // not an error here (the job may have been purged: the atom is `never`); a new submission
  // is refused for it by Apply(JobSubmitted), as are submissions to closed queues.
  Status Submit(JobSpec spec);
  // Opens/closes (submissions) and activates/inactivates (dispatch) a queue; unset fields
  // stay. Errors: kNotFound for an unknown queue.
  Status SetQueueStatus(std::string_view queue, std::optional<bool> open,
                        std::optional<bool> active);
  // Ends a PENDING/HELD job as CANCELLED (R-ADM-4), or a RUNNING job (its slots are released).
  Status Cancel(JobId id, Instant now);
  // Ends a RUNNING job: DONE when exit_code is 0 and cause kNone, EXIT otherwise.
  Status Finish(JobId id, Instant now, int32_t exit_code, ExitCause cause);
  // REQUIRES: the job is PENDING and the allocation fits the hosts' free slots.
  void Start(JobId id, Allocation allocation, Instant now);
  // REQUIRES: the job is PENDING or HELD.
  void Fail(JobId id, ExitCause cause, Instant now);
  Status SetHostState(std::string_view host, HostState state);
  Status AddHost(HostSpec spec);
  // Replaces the configuration: hosts and queues may be added or changed, not removed while
  // they still have jobs. Every pending job is classified again in the next cycle.
  Status Reconfigure(const ClusterConfig& config);
  void MarkClassified();
  // Makes room for `n` jobs in all, so the job table is not rebuilt as it grows (a driver
  // that knows its workload, like the simulator, calls it once).
  void ReserveJobs(size_t n) { jobs_.reserve(n); }
  // The earliest begin time after `now` of a waiting job, if any (a timer for the cycle).
  std::optional<Instant> NextBeginAfter(Instant now) const {
    auto it = future_begins_.upper_bound({now, std::numeric_limits<JobId>::max()});
    if (it == future_begins_.end()) return std::nullopt;
    return it->first;
  }

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
  int64_t ended_outside_count() const { return static_cast<int64_t>(ended_.size()); }
  // The job is in the table or ended outside it (a dependency may name it).
  bool Knows(JobId id) const { return jobs_.contains(id) || ended_.contains(id); }

  // Preemption bookkeeping, from the cycle's decisions (Commit).
  // REQUIRES for MarkPreempted: the victim is RUNNING or ADMITTING.
  void MarkPreempted(JobId victim, JobId for_job);
  void DropPreemption(JobId for_job) { preemptions_.erase(for_job); }
  void SetReclaimDeadline(QueueIndex queue, std::optional<Instant> deadline) {
    queues_[queue].reclaim_deadline = deadline;
  }

  // Adds one cycle's admission attempt outcomes to a queue's totals.
  void AddTotals(QueueIndex queue, const AdmissionTotals& delta);
  // Replaces the head fields of a pending job's admission record (UpdateAdmission).
  void UpdateAdmission(JobId id, int32_t bypass_count, std::optional<Instant> first_blocked,
                       std::optional<Instant> gate_since);

 private:
  ClusterState() = default;
  // Shares the pool and the requests and points into the source's jobs: Clone() fixes that.
  ClusterState(const ClusterState&) = default;
  Job* MutableJob(JobId id);
  Status AddQueue(const QueueSpec& spec);
  ResourceId InternHostResource(const std::string& name);
  void SetSharedResources(const std::map<std::string, int64_t>& totals);
  void SetHostSpec(Host& host, HostSpec spec);
  Status ResolveQueueHosts(Queue& queue) const;
  bool PassesSelectSlow(resreq::ExprId select, HostIndex host, const resreq::HostView& view) const;
  bool TestsFreeAmounts(resreq::ExprId id) const;
  struct SelectMemo;
  // The memo entry of a select (created on first use). REQUIRES: select != kNoExpr.
  SelectMemo& MemoOf(resreq::ExprId select) const;
  void Release(Job& job);
  void RemovePending(Job& job);
  // Re-evaluates the dependencies of the jobs that name `changed` (it changed state).
  void UpdateDependents(JobId changed);
  DependEvaluation EvaluateDependency(const Dependency& dependency) const;

  ClusterConfig config_;
  std::vector<Host> hosts_;
  HostSlots host_slots_;  // mirrors hosts_: SyncHostSlots after every change to a host
  void SyncHostSlots(const Host& host);
  std::vector<Queue> queues_;
  std::unordered_map<std::string, HostIndex> host_by_name_;
  std::unordered_map<std::string, QueueIndex> queue_by_name_;
  std::unordered_map<JobId, Job> jobs_;
  // Held by pointer: moving the state must not move the pool or the requests jobs point to.
  // Never shared between two states once Clone() returns.
  std::shared_ptr<resreq::ExprPool> expr_pool_ = std::make_shared<resreq::ExprPool>();
  std::unordered_map<std::string, std::shared_ptr<resreq::Request>> requests_;  // by text
  struct SelectMemo {
    bool reads_free_amounts = false;
    bool tests_free_amounts = false;
    std::vector<uint8_t> verdicts;  // by host: kSelectUnknown, ...
  };
  mutable std::unordered_map<resreq::ExprId, SelectMemo> select_memo_;  // never iterated
  mutable std::map<FeasibilityKey, FeasibilityVerdict> feasibility_memo_;
  std::vector<std::string> host_resources_;
  std::vector<std::string> shared_resources_;
  std::vector<int64_t> shared_total_;
  std::vector<int64_t> shared_used_;
  std::set<RunningEntry> running_;
  std::set<RunningByEnd> running_by_end_;  // the same jobs as running_
  LimitUsage limit_usage_;
  std::map<JobId, Preemption> preemptions_;
  std::map<std::pair<QueueIndex, std::string>, FairshareUsage> fairshare_usage_;
  void ChargeFairshare(const Job& job, Instant now);
  void ConfigureLimits();
  std::set<std::pair<Instant, JobId>> future_begins_;  // waiting jobs with a begin time
  std::vector<JobId> unclassified_;
  struct DependState {
    Dependency expression;
    DependEvaluation eval;
  };
  std::unordered_map<JobId, DependState> depends_;  // by dependent job; lookups only
  // Named job -> the waiting jobs whose expressions name it. Lookups only, never iterated;
  // each list is in submission order.
  std::unordered_map<JobId, std::vector<JobId>> dependents_;
  std::unordered_map<JobId, DependTarget> ended_;  // NoteEnded/Forget; lookups only
  std::vector<DispatchWindows> windows_;  // by QueueIndex
  QueueIndex default_queue_ = 0;
  uint64_t next_seq_ = 1;
  uint64_t next_start_seq_ = 1;
  RuntimeHistory runtime_history_;
  int64_t total_slots_ = 0;
  int64_t free_slots_ = 0;
};

}  // namespace sluice::core
