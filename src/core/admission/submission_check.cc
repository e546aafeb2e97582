#include "core/admission/submission_check.h"

#include "core/admission/policy_limits.h"

namespace sluice::core {

std::optional<NeverRunnable> SubmissionCheck::Check(const JobSpec& spec) {
  if (state_.topology().queues().empty() || spec.min_tasks < 1 || spec.max_tasks < spec.min_tasks) {
    return std::nullopt;
  }
  std::optional<QueueIndex> queue = state_.topology().default_queue();
  if (!spec.queue.empty()) queue = state_.topology().FindQueue(spec.queue);
  if (!queue) return std::nullopt;
  const std::string& text =
      spec.resreq.empty() ? state_.topology().queues()[*queue].spec.default_resreq : spec.resreq;
  Result<const resreq::Request*> request = state_.CompileRequest(text);
  if (!request) return std::nullopt;
  // The job as ClusterState::Submit would hold it, without entering it anywhere.
  Job job;
  job.spec = spec;
  job.queue = *queue;
  job.request = *request;
  job.min_slots = MinSlots(**request, spec);
  const RequestCatalog::FeasibilityKey key{.request = job.request,
                                           .queue = job.queue,
                                           .exclusive = spec.exclusive,
                                           .min_tasks = spec.min_tasks,
                                           .max_tasks = spec.max_tasks};
  auto [it, inserted] = memo_.try_emplace(key);
  if (inserted) {
    if (!all_configured_) all_configured_.emplace(Capacity::AllConfigured(state_));
    Feasibility feasibility = allocator_.CheckFeasible(job, state_, *all_configured_);
    if (!feasibility.ok) {
      it->second = NeverRunnable{.message = std::move(feasibility.why),
                                 .reasons = std::move(feasibility.reasons)};
    }
  }
  if (it->second) return it->second;
  // Policy maxima depend on the user and project: not memoized.
  if (std::optional<std::string> why = ExceedsPolicyLimits(job, state_)) {
    return NeverRunnable{.message = std::move(*why)};
  }
  return std::nullopt;
}

}  // namespace sluice::core
