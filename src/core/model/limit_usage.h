// Named limits at run time (R-Q-2): which limits apply to a job, who the "consumer" is, and
// how much each consumer uses now.
//
// A limit (LimitSpec, as LSF's Limit sections) caps slots, jobs or resources for the jobs in
// its scope: users, queues and projects (each either all together or `per_each` separately)
// and hosts (together, or per host). A job's consumer under a limit is the tuple of the
// scope values that are counted separately: its user under `per_user`, its queue under
// per-queue, its project under per-project, and the host under per-host; the dimensions
// counted together contribute "" (or kAllHosts). Usage is charged when a job starts and
// credited when it stops, so a cycle reads it in O(log consumers).
// Host-scoped limits count only the part of a job placed on the limit's hosts.
// Thread-safety: none (owned by ClusterState).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/ids.h"
#include "core/model/config.h"
#include "core/model/job.h"

namespace sluice::core {

inline constexpr HostIndex kAllHosts = ~HostIndex{0};

// What one consumer holds under one limit.
struct LimitAmounts {
  int64_t slots = 0;
  int64_t jobs = 0;
  std::map<std::string, int64_t> resources;  // by resource name
};

// A limit resolved against the cluster: host membership by index, resource names split into
// host and shared.
struct CompiledLimit {
  LimitSpec spec;
  std::vector<uint8_t> covers_host;  // by HostIndex; empty when the limit has no host scope
  bool CoversHost(HostIndex h) const {
    return covers_host.empty() || (h < covers_host.size() && covers_host[h]);
  }
  bool host_scoped() const { return !covers_host.empty(); }
  bool per_host() const { return spec.hosts.per_each; }
};

// The consumer key: user, queue, project (empty when counted together), host.
using LimitConsumer = std::tuple<std::string, std::string, std::string, HostIndex>;

// The smallest amount of `resource` any alternative of the job's request needs in total
// (per-task host amounts times tasks; per-job shared amounts), rounded up to whole units.
int64_t LimitDemand(const Job& job, const std::string& resource, bool shared);

class LimitUsage {
 public:
  LimitUsage() = default;
  // Resolves the limits' host scopes (host names or host group names) against `hosts`.
  void Configure(const std::vector<LimitSpec>& limits, const std::vector<std::string>& host_names,
                 const std::map<std::string, std::vector<std::string>>& host_groups);

  const std::vector<CompiledLimit>& limits() const { return limits_; }
  // The same limits with no usage (a cycle's overlay of its own starts).
  LimitUsage EmptyCopy() const {
    LimitUsage copy;
    copy.limits_ = limits_;
    copy.usage_.assign(limits_.size(), {});
    return copy;
  }

  // True when the limit's user/queue/project scope covers the job (hosts aside).
  bool Applies(const CompiledLimit& limit, const std::string& user, const std::string& queue,
               const std::string& project) const;
  // The job's consumer under `limit` (host: the host for per-host limits, else kAllHosts).
  static LimitConsumer ConsumerOf(const CompiledLimit& limit, const std::string& user,
                                  const std::string& queue, const std::string& project,
                                  HostIndex host);
  // What the consumer holds under limit `index` (zero when nothing).
  const LimitAmounts& Used(size_t index, const LimitConsumer& consumer) const;
  // Calls fn(HostIndex, const LimitAmounts&) for every host where a per-host consumer with
  // this user/queue/project holds something under limit `index`.
  template <typename Fn>
  void ForEachHostUse(size_t index, const LimitConsumer& consumer, Fn&& fn) const {
    const auto& by_consumer = usage_[index];
    auto [user, queue, project, host] = consumer;
    for (auto it = by_consumer.lower_bound({user, queue, project, 0});
         it != by_consumer.end() && std::get<0>(it->first) == user &&
         std::get<1>(it->first) == queue && std::get<2>(it->first) == project;
         ++it) {
      fn(std::get<3>(it->first), it->second);
    }
  }

  // Charges (sign +1) or credits (sign -1) a job's allocation to every limit it falls under.
  // Resource ids of the allocation are named through the cluster's catalogs.
  void Charge(const Job& job, const std::string& queue, const Allocation& allocation, int sign,
              const std::vector<std::string>& host_resource_names,
              const std::vector<std::string>& shared_resource_names);

 private:
  LimitAmounts& At(size_t index, const LimitConsumer& consumer) { return usage_[index][consumer]; }
  // Drops a consumer entry that holds nothing, so maps stay as small as the running set.
  void Tidy(size_t index, const LimitConsumer& consumer);

  std::vector<CompiledLimit> limits_;
  std::vector<std::map<LimitConsumer, LimitAmounts>> usage_;  // by limit; ordered for ranges
};

}  // namespace sluice::core
