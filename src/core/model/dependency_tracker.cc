#include "core/model/dependency_tracker.h"

#include <algorithm>
#include <utility>

#include "base/array_ids.h"

namespace sluice::core {

DependTarget DependTargetOf(const Job& job) {
  return DependTarget{.state = job.state, .started = job.start_seq != 0};
}

DependEvaluation DependencyTracker::Evaluate(const Dependency& dependency,
                                             const JobTable& jobs) const {
  return dependency.Evaluate([&](JobId named) -> std::optional<DependTarget> {
    auto job = jobs.find(named);
    if (job != jobs.end()) return DependTargetOf(job->second);
    auto ended = ended_.find(named);
    if (ended != ended_.end()) return ended->second;
    if (arrays_.empty()) return std::nullopt;
    if (auto array = arrays_.find(named); array != arrays_.end()) return array->second;
    if (IsArrayElement(named) && arrays_.contains(ArrayIdOf(named))) return DependTarget{};
    return std::nullopt;
  });
}

void DependencyTracker::Track(JobId id, Dependency dependency, const JobTable& jobs) {
  for (JobId named : dependency.jobs()) dependents_[named].push_back(id);
  DependEvaluation eval = Evaluate(dependency, jobs);
  depends_.emplace(id, DependState{.expression = std::move(dependency), .eval = std::move(eval)});
}

void DependencyTracker::OnChanged(JobId changed, const JobTable& jobs) {
  auto it = dependents_.find(changed);
  if (it == dependents_.end()) return;
  for (JobId dependent : it->second) {
    auto job = jobs.find(dependent);
    if (job == jobs.end() ||
        (job->second.state != JobState::kPending && job->second.state != JobState::kHeld)) {
      continue;  // it no longer waits
    }
    DependState& dep = depends_.at(dependent);
    dep.eval = Evaluate(dep.expression, jobs);
  }
}

void DependencyTracker::NoteEnded(JobId id, DependTarget target, const JobTable& jobs) {
  ended_[id] = target;
  OnChanged(id, jobs);
}

void DependencyTracker::Forget(const Job& job) {
  const JobId id = job.spec.id;
  ended_[id] = DependTargetOf(job);
  depends_.erase(id);
  dependents_.erase(id);  // their verdicts on it are final now
}

void DependencyTracker::Withdraw(JobId id) {
  if (auto dep = depends_.find(id); dep != depends_.end()) {
    for (JobId named : dep->second.expression.jobs()) {
      if (auto it = dependents_.find(named); it != dependents_.end()) std::erase(it->second, id);
    }
    depends_.erase(dep);
  }
  dependents_.erase(id);
}

void DependencyTracker::Untrack(JobId id) {
  ended_.erase(id);
  if (auto dep = depends_.find(id); dep != depends_.end()) {
    for (JobId named : dep->second.expression.jobs()) {
      if (auto it = dependents_.find(named); it != dependents_.end()) std::erase(it->second, id);
    }
    depends_.erase(dep);
  }
}

}  // namespace sluice::core

namespace sluice::core {

void DependencyTracker::SetArrayTarget(JobId array, DependTarget target, const JobTable& jobs) {
  arrays_[array] = target;
  OnChanged(array, jobs);
}

std::vector<JobId> DependencyTracker::CycleThrough(JobId id, const Dependency& proposed) const {
  // Depth-first from the jobs `proposed` names, with an explicit stack (no recursion on
  // users' input); `parent` records how each job was reached, to name the path.
  std::unordered_map<JobId, JobId> parent;
  std::vector<JobId> stack;
  for (JobId named : proposed.jobs()) {
    if (parent.emplace(named, id).second) stack.push_back(named);
  }
  while (!stack.empty()) {
    const JobId at = stack.back();
    stack.pop_back();
    if (at == id) {
      std::vector<JobId> path = {id};
      for (JobId step = parent.at(id); step != id; step = parent.at(step)) path.push_back(step);
      path.push_back(id);
      std::reverse(path.begin() + 1, path.end() - 1);
      return path;
    }
    auto it = depends_.find(at);
    if (it == depends_.end()) continue;
    for (JobId next : it->second.expression.jobs()) {
      if (parent.emplace(next, at).second) stack.push_back(next);
    }
  }
  return {};
}

}  // namespace sluice::core
