// DependencyTracker: the current verdict of every waiting job's dependency (R-Q-3), kept up to
// date as the jobs it names change state, and the outcome of ended jobs that left the job
// table. One of ClusterState's parts (cluster_state.h); ClusterState owns it, tells it of
// every change of a job's state (OnChanged) and hands it out read-only.
//
// Representation:
//  - depends_: by dependent job, its compiled expression and last verdict.
//  - dependents_: named job -> the jobs whose expressions name it, in submission order.
//  - ended_: ended jobs outside the job table (NoteEnded, Forget), with what a dependency
//    reads of them.
// All three are hash maps used for lookups only, never iterated where order matters (R-ARCH-2).
// Invariants: a job's verdict is Dependency::Evaluate over the job table then ended_, as of the
// last OnChanged of each job it names; a job in ended_ is not in the job table.
// Thread-safety: none; owned by ClusterState.
// Implements R-Q-3 (dependency verdicts, incrementally).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/ids.h"
#include "core/model/dependency.h"
#include "core/model/job.h"

namespace sluice::core {

// The job table as the tracker reads it.
using JobTable = std::unordered_map<JobId, Job>;

// What a dependency reads of a job (in the table or, once ended, kept outside it).
DependTarget DependTargetOf(const Job& job);

class DependencyTracker {
 public:
  // --- Reads. ---

  // The current verdict of a job's dependency, or nullptr when it has none. O(1).
  const DependEvaluation* Of(JobId id) const {
    auto it = depends_.find(id);
    return it == depends_.end() ? nullptr : &it->second.eval;
  }
  // The expression of a job's tracked dependency, or nullptr when it has none. O(1).
  const Dependency* ExpressionOf(JobId id) const {
    auto it = depends_.find(id);
    return it == depends_.end() ? nullptr : &it->second.expression;
  }
  // The job ended and left the job table (NoteEnded, Forget).
  bool HasEnded(JobId id) const { return ended_.contains(id); }
  // Some tracked dependency names job `id`.
  bool HasDependents(JobId id) const { return dependents_.contains(id); }
  int64_t ended_count() const { return static_cast<int64_t>(ended_.size()); }
  // The cycle job `id` would close if its dependency became `proposed` (issue 48: a job that
  // waits for itself, or two that wait for each other, wait forever): the path id, a, ..., id
  // through the tracked dependencies, or empty when there is none. Visits each job at most
  // once: O(jobs reachable from `proposed`).
  std::vector<JobId> CycleThrough(JobId id, const Dependency& proposed) const;

  // --- Changes (ClusterState only). ---

  // Starts tracking job `id`'s dependency and evaluates it against `jobs` and ended jobs.
  // REQUIRES: `id` is not tracked.
  void Track(JobId id, Dependency dependency, const JobTable& jobs);
  // Job `changed` changed state (or appeared): re-evaluates the dependencies that name it of
  // the jobs still waiting (PENDING or HELD in `jobs`); the others keep their last verdict.
  void OnChanged(JobId changed, const JobTable& jobs);
  // Records the outcome of an ended job that is not in `jobs` (it ended before a restart),
  // then re-evaluates its dependents (OnChanged).
  void NoteEnded(JobId id, DependTarget target, const JobTable& jobs);
  // `job` ended and leaves the table: keeps its outcome, drops its own dependency, and its
  // dependents keep their verdicts on it for good (they are final: it cannot change again).
  void Forget(const Job& job);
  // Job `id` is taken back as if never submitted: no trace of it remains.
  void Withdraw(JobId id);
  // Job `id` will be tracked again (a modify or a requeue after its end): its own dependency
  // and its ended outcome go; the jobs that name it keep naming it.
  void Untrack(JobId id);
  // What a dependency reads of array `array` as a whole (R-UX-3: `done(ID)` waits for every
  // element), then re-evaluates its dependents. An element of a known array that is neither
  // in `jobs` nor ended reads as PENDING (it is not a Job yet, job_array.h).
  void SetArrayTarget(JobId array, DependTarget target, const JobTable& jobs);

 private:
  DependEvaluation Evaluate(const Dependency& dependency, const JobTable& jobs) const;

  struct DependState {
    Dependency expression;
    DependEvaluation eval;
  };
  std::unordered_map<JobId, DependState> depends_;
  std::unordered_map<JobId, std::vector<JobId>> dependents_;
  std::unordered_map<JobId, DependTarget> ended_;
  std::unordered_map<JobId, DependTarget> arrays_;  // by array id, the whole array
};

}  // namespace sluice::core
