#include "core/model/limit_usage.h"

#include <algorithm>
#include <cmath>

namespace sluice::core {
namespace {

bool Covers(const LimitScope& scope, const std::string& name) {
  if (!scope.set || scope.names.empty()) return true;
  return std::find(scope.names.begin(), scope.names.end(), name) != scope.names.end();
}

const LimitAmounts kNothing{};

}  // namespace

int64_t LimitDemand(const Job& job, const std::string& resource, bool shared) {
  int64_t best = -1;
  for (const resreq::Compound& alternative : job.request->alternatives) {
    int64_t total = 0;
    for (const resreq::Primary& part : alternative.parts) {
      const int64_t tasks = part.count > 0 ? part.count : job.spec.min_tasks;
      for (const resreq::Rusage& r : part.rusage) {
        if (r.resource != resource) continue;
        const auto units = static_cast<int64_t>(std::ceil(r.amount));
        total += shared ? units : units * tasks;
      }
    }
    if (best < 0 || total < best) best = total;
  }
  return std::max<int64_t>(best, 0);
}

void LimitUsage::Configure(const std::vector<LimitSpec>& limits,
                           const std::vector<std::string>& host_names,
                           const std::map<std::string, std::vector<std::string>>& host_groups) {
  limits_.clear();
  for (const LimitSpec& spec : limits) {
    CompiledLimit limit{.spec = spec, .covers_host = {}};
    if (spec.hosts.set) {
      limit.covers_host.assign(std::max<size_t>(host_names.size(), 1),
                               spec.hosts.names.empty() ? 1 : 0);
      for (const std::string& name : spec.hosts.names) {
        auto mark = [&](const std::string& host) {
          auto it = std::find(host_names.begin(), host_names.end(), host);
          if (it != host_names.end()) limit.covers_host[it - host_names.begin()] = 1;
        };
        auto group = host_groups.find(name);
        if (group != host_groups.end()) {
          for (const std::string& host : group->second) mark(host);
        } else {
          mark(name);
        }
      }
    }
    limits_.push_back(std::move(limit));
  }
  usage_.assign(limits_.size(), {});
}

bool LimitUsage::Applies(const CompiledLimit& limit, const std::string& user,
                         const std::string& queue, const std::string& project) const {
  return Covers(limit.spec.users, user) && Covers(limit.spec.queues, queue) &&
         Covers(limit.spec.projects, project);
}

LimitConsumer LimitUsage::ConsumerOf(const CompiledLimit& limit, const std::string& user,
                                     const std::string& queue, const std::string& project,
                                     HostIndex host) {
  return {limit.spec.users.per_each ? user : std::string(),
          limit.spec.queues.per_each ? queue : std::string(),
          limit.spec.projects.per_each ? project : std::string(),
          limit.per_host() ? host : kAllHosts};
}

const LimitAmounts& LimitUsage::Used(size_t index, const LimitConsumer& consumer) const {
  auto it = usage_[index].find(consumer);
  return it == usage_[index].end() ? kNothing : it->second;
}

void LimitUsage::Charge(const Job& job, const std::string& queue, const Allocation& allocation,
                        int sign, const std::vector<std::string>& host_resource_names,
                        const std::vector<std::string>& shared_resource_names) {
  auto add_host_resources = [&](LimitAmounts& used, const HostGrant& grant) {
    for (const ResourceAmount& r : grant.resources) {
      used.resources[host_resource_names[r.id]] += sign * r.amount;
    }
  };
  for (size_t i = 0; i < limits_.size(); ++i) {
    const CompiledLimit& limit = limits_[i];
    if (!Applies(limit, job.spec.user, queue, job.spec.project)) continue;
    if (limit.per_host()) {
      for (const HostGrant& grant : allocation.hosts) {
        if (!limit.CoversHost(grant.host)) continue;
        const LimitConsumer consumer =
            ConsumerOf(limit, job.spec.user, queue, job.spec.project, grant.host);
        LimitAmounts& used = At(i, consumer);
        used.slots += sign * grant.slots;
        used.jobs += sign;
        add_host_resources(used, grant);
        Tidy(i, consumer);
      }
      continue;
    }
    const LimitConsumer consumer =
        ConsumerOf(limit, job.spec.user, queue, job.spec.project, kAllHosts);
    LimitAmounts& used = At(i, consumer);
    bool any = false;
    for (const HostGrant& grant : allocation.hosts) {
      if (!limit.CoversHost(grant.host)) continue;
      any = true;
      used.slots += sign * grant.slots;
      add_host_resources(used, grant);
    }
    if (!limit.host_scoped()) {
      for (const ResourceAmount& r : allocation.shared) {
        used.resources[shared_resource_names[r.id]] += sign * r.amount;
      }
    }
    if (any) used.jobs += sign;
    Tidy(i, consumer);
  }
}

void LimitUsage::Tidy(size_t index, const LimitConsumer& consumer) {
  auto it = usage_[index].find(consumer);
  if (it == usage_[index].end()) return;
  const LimitAmounts& used = it->second;
  const bool empty = used.slots == 0 && used.jobs == 0 &&
                     std::all_of(used.resources.begin(), used.resources.end(),
                                 [](const auto& entry) { return entry.second == 0; });
  if (empty) usage_[index].erase(it);
}

}  // namespace sluice::core
