#include "server/pending_quota.h"

#include <cstdint>
#include <map>

#include "core/model/job_array.h"

namespace sluice::server {

using nlohmann::json;

namespace {

struct Over {
  std::string queue;  // "" for the cluster-wide quota
  const char* limit;
  int64_t max = 0;
  int64_t waiting = 0;
  int64_t adding = 0;
  const char* what = "waiting jobs";
};

Refusal QuotaRefusal(const Over& over, const std::string& user, bool batch) {
  const std::string whose = std::string(over.limit) == "max_pending" ? "" : " of " + user;
  const std::string where = over.queue.empty() ? "the cluster" : "queue '" + over.queue + "'";
  const std::string its = over.queue.empty() ? "quotas." : "its ";
  const std::string message = std::string(batch ? "jobs" : "job") + ": " + where + " would hold " +
                              std::to_string(over.waiting + over.adding) + " " + over.what + whose +
                              "; " + its + over.limit + " is " + std::to_string(over.max) + " (" +
                              std::to_string(over.waiting) + " wait, this submission adds " +
                              std::to_string(over.adding) + ")";
  json cause = {
      {"reason", "QUOTA"},       {"queue", over.queue.empty() ? json(nullptr) : json(over.queue)},
      {"limit", over.limit},     {"max", over.max},
      {"waiting", over.waiting}, {"adding", over.adding}};
  return Refusal{.kind = RefusalKind::kOverQuota, .message = message, .cause = cause};
}

// Array elements that are not Jobs yet (waiting or held) wait too; the ones that are Jobs
// are in the queue's pending list like any job.
int64_t UnqueuedElements(const core::ClusterState& state, QueueIndex queue,
                         const std::string* user) {
  int64_t count = 0;
  for (const auto& [id, array] : state.arrays()) {
    if (array.queue == queue && (user == nullptr || array.spec.user == *user)) {
      count += array.waiting + array.held;
    }
  }
  return count;
}

int64_t WaitingOf(const core::ClusterState& state, QueueIndex index, const std::string& user) {
  int64_t mine = UnqueuedElements(state, index, &user);
  for (const core::PendingEntry& entry : state.topology().queues()[index].pending) {
    if (entry.job != nullptr && entry.job->spec.user == user) ++mine;
  }
  return mine;
}


// Step 2 for one queue: its limits, if any, against what it holds and what comes.
std::optional<Over> CheckQueue(const config::Quotas& quotas, const core::ClusterState& state,
                               QueueIndex index, const std::string& user, int64_t added) {
  const core::Queue& queue = state.topology().queues()[index];
  auto it = quotas.queues.find(queue.spec.name);
  if (it == quotas.queues.end()) return std::nullopt;
  const config::QueueQuota& q = it->second;
  const int64_t waiting =
      static_cast<int64_t>(queue.pending.size()) + UnqueuedElements(state, index, nullptr);
  if (q.max_pending && waiting + added > *q.max_pending) {
    return Over{queue.spec.name, "max_pending", *q.max_pending, waiting, added};
  }
  if (!q.max_pending_per_user) return std::nullopt;
  const int64_t mine = WaitingOf(state, index, user);
  if (mine + added > *q.max_pending_per_user) {
    return Over{queue.spec.name, "max_pending_per_user", *q.max_pending_per_user, mine, added};
  }
  return std::nullopt;
}

// A user's array elements that are not jobs yet, and what the submission adds to them;
// walks the arrays only when the submission holds one, so a plain job costs nothing here.
std::optional<Over> CheckArrayElements(const config::Quotas& quotas,
                                       const core::ClusterState& state, const std::string& user,
                                       const std::vector<json>& specs) {
  int64_t adding = 0;
  for (const json& spec : specs) {
    if (spec.contains("array")) adding += JobsOf(spec);
  }
  if (adding == 0) return std::nullopt;
  int64_t mine = 0;
  for (const auto& [id, array] : state.arrays()) {
    if (array.spec.user == user) mine += array.waiting + array.held;
  }
  if (mine + adding <= quotas.max_array_elements_per_user) return std::nullopt;
  return Over{.queue = "",
              .limit = "max_array_elements_per_user",
              .max = quotas.max_array_elements_per_user,
              .waiting = mine,
              .adding = adding,
              .what = "array elements not yet jobs"};
}

}  // namespace

int64_t JobsOf(const json& spec) {
  const auto array = spec.find("array");
  if (array == spec.end() || !array->is_string()) return 1;
  Result<core::ArraySpec> parsed = core::ParseArraySpec(array->get<std::string>());
  return parsed ? static_cast<int64_t>(parsed->indices.size()) : 1;  // refused later if bad
}

// Steps: 1. the user's array elements against their cap; 2. the jobs the submission adds to
// each queue; 3. each queue's quotas, in queue order; 4. the user's waiting jobs in every
// queue against the cluster-wide quota.
std::optional<Refusal> CheckPendingQuota(const config::Quotas& quotas,
                                         const core::ClusterState& state, const std::string& user,
                                         const std::vector<json>& specs, bool batch) {
  if (auto over = CheckArrayElements(quotas, state, user, specs)) {
    return QuotaRefusal(*over, user, batch);
  }
  if (quotas.empty() || state.topology().queues().empty()) return std::nullopt;
  std::map<QueueIndex, int64_t> adding;
  int64_t added = 0;
  for (const json& spec : specs) {
    const std::string name = spec.value("queue", "");
    std::optional<QueueIndex> index =
        name.empty() ? std::optional<QueueIndex>(state.topology().default_queue())
                     : state.topology().FindQueue(name);
    const int64_t jobs = JobsOf(spec);
    added += jobs;
    if (index) adding[*index] += jobs;
  }
  for (const auto& [index, jobs] : adding) {
    if (auto over = CheckQueue(quotas, state, index, user, jobs)) {
      return QuotaRefusal(*over, user, batch);
    }
  }
  if (!quotas.max_pending_per_user) return std::nullopt;
  int64_t mine = 0;
  for (QueueIndex index = 0; index < state.topology().queues().size(); ++index) {
    mine += WaitingOf(state, index, user);
  }
  if (mine + added > *quotas.max_pending_per_user) {
    return QuotaRefusal(Over{"", "max_pending_per_user", *quotas.max_pending_per_user, mine, added},
                        user, batch);
  }
  return std::nullopt;
}

}  // namespace sluice::server
