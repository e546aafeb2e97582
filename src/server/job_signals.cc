// Controller::Signal (issue 47): a user's signal to a running job, as `scancel --signal` and
// `bkill -s` send it. The controller only checks and routes it: the agents of the job's hosts
// deliver it (AgentRegistry::OrderSignal); nothing is stored, and the job's state does not
// change (a signal that ends the job comes back as its exit).
#include <algorithm>

#include "base/array_ids.h"
#include "server/controller.h"
#include "server/job_arrays.h"
#include "server/job_identity.h"
#include "server/views.h"
#include "wire/signal_name.h"

namespace sluice::server {

Answer Controller::Signal(const Caller& caller, JobId id,
                          std::optional<std::pair<int32_t, int32_t>> range,
                          const std::string& signal_text) {
  // Names only: a number is the client's to translate (numbers differ between architectures).
  Result<std::string> signal = wire::CanonicalSignalName(signal_text);
  if (!signal) return signal.error();
  MutexLock lock(ctx_.mu());
  JobInfo* named = book_.Find(id);
  if (named == nullptr) return NotFound("no job " + FormatJobId(id));
  SLUICE_RETURN_IF_ERROR(RefuseUnlessOwner(caller, named->user, id));
  // The job itself, or the elements of an array that are jobs now (the others wait).
  std::vector<JobInfo*> targets{named};
  if (IsArrayParent(*named)) {
    targets.clear();
    const auto [first, last] = range.value_or(std::pair(0, kMaxArrayIndex));
    if (const core::JobArray* array = ctx_.state().FindArray(id); array != nullptr) {
      const auto& indices = array->indices;
      for (auto it = std::lower_bound(indices.begin(), indices.end(), first);
           it != indices.end() && *it <= last; ++it) {
        if (array->states[it - indices.begin()] != core::ElementState::kQueued) continue;
        if (JobInfo* element = book_.Find(ArrayElementId(id, *it))) targets.push_back(element);
      }
    }
  } else if (range) {
    return InvalidArgument("index: job " + FormatJobId(id) + " is not a job array");
  }
  std::erase_if(targets, [](const JobInfo* job) { return job->state() != JobState::kRunning; });
  if (targets.empty()) {
    const std::string which =
        !IsArrayParent(*named) ? ""
        : range ? " and none of its elements in [" + std::to_string(range->first) + ", " +
                      std::to_string(range->second) + "] runs"
                : " and none of its elements runs";
    return FailedPrecondition("job " + FormatJobId(id) + " is " + named->StateText() + which +
                              "; only a running job can be signalled");
  }
  for (JobInfo* job : targets) {
    std::vector<std::string> hosts;
    std::string listed;
    for (const auto& [host, slots] : job->launch().hosts) {
      hosts.push_back(host);
      listed += (listed.empty() ? "" : ",") + host;
    }
    agents_.OrderSignal(job->row.id, job->launch().run, hosts, *signal);
    ctx_.log().info("job {}: signal {} by {} (to {})", FormatJobId(job->row.id), *signal,
                    caller.user, listed);
  }
  nlohmann::json answer = JobJson(*named, book_, ctx_.state(), ctx_.Now(), false);
  answer["signal"] = *signal;
  answer["signalled"] = targets.size();
  return answer;
}

}  // namespace sluice::server
