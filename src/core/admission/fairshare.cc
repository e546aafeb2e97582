#include "core/admission/fairshare.h"

#include <map>
#include <queue>
#include <tuple>
#include <vector>

namespace sluice::core {
namespace {

constexpr double kSecondsPerHour = 3600;

struct UserTurn {
  double priority = 0;
  std::string user;
  size_t next = 0;  // index into the user's jobs

  // std::priority_queue keeps the largest first: highest priority, then smallest name.
  friend bool operator<(const UserTurn& a, const UserTurn& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.user > b.user;
  }
};

double FairshareShares(const QueueSpec& spec, const std::string& user) {
  if (auto it = spec.fairshare.find(user); it != spec.fairshare.end()) return it->second;
  if (auto it = spec.fairshare.find("default"); it != spec.fairshare.end()) return it->second;
  return 1;
}

}  // namespace

QueueOrder FairshareOrder(const Queue& queue, const ClusterState& state, Instant now) {
  std::map<std::string, std::vector<const Job*>> jobs_by_user;  // each in queue order
  for (const PendingEntry& entry : queue.pending)
    jobs_by_user[entry.job->spec.user].push_back(entry.job);
  std::map<std::string, double> usage;  // slot-seconds
  for (const auto& [user, jobs] : jobs_by_user) {
    auto past = state.usage().fairshare().find({queue.index, user});
    usage[user] = past == state.usage().fairshare().end()
                      ? 0
                      : past->second.At(now, queue.spec.fairshare_half_life);
  }
  for (const RunningEntry& entry : state.running()) {
    const Job& job = *entry.job;
    if (job.queue != queue.index || !usage.contains(job.spec.user)) continue;
    const double rate = FairshareRate(job.allocation, queue.spec);
    usage[job.spec.user] +=
        rate * (static_cast<double>(std::max<Instant>(now - job.start_time, 0)) + kSecondsPerHour);
  }
  auto priority = [&](const std::string& user) {
    return FairshareShares(queue.spec, user) / (1 + usage[user] / kSecondsPerHour);
  };
  std::priority_queue<UserTurn> turns;
  for (const auto& [user, jobs] : jobs_by_user) turns.push(UserTurn{priority(user), user, 0});
  std::vector<const Job*> order;
  order.reserve(queue.pending.size());
  while (!turns.empty()) {
    UserTurn turn = turns.top();
    turns.pop();
    const std::vector<const Job*>& jobs = jobs_by_user[turn.user];
    const Job* job = jobs[turn.next++];
    order.push_back(job);
    if (turn.next == jobs.size()) continue;
    usage[turn.user] += job->min_slots * kSecondsPerHour;
    turn.priority = priority(turn.user);
    turns.push(std::move(turn));
  }
  return QueueOrder(std::move(order));
}

}  // namespace sluice::core
