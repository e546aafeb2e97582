#include "core/admission/cycle_limits.h"

#include <algorithm>
#include <limits>
#include <set>

namespace sluice::core {
namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

int64_t Get(const std::map<std::string, int64_t>& amounts, const std::string& name) {
  auto it = amounts.find(name);
  return it == amounts.end() ? 0 : it->second;
}

void AddInto(LimitAmounts& into, const LimitAmounts& more) {
  into.slots += more.slots;
  into.jobs += more.jobs;
  for (const auto& [name, amount] : more.resources) into.resources[name] += amount;
}

}  // namespace

std::string DescribeConsumer(const LimitConsumer& consumer, const std::vector<Host>& hosts) {
  const auto& [user, queue, project, host] = consumer;
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (!user.empty()) add("user " + user);
  if (!queue.empty()) add("queue " + queue);
  if (!project.empty()) add("project " + project);
  if (host != kAllHosts && host < hosts.size()) add("host " + hosts[host].spec.name);
  return out;
}

LimitAmounts CycleLimits::UsedNow(size_t index, const LimitConsumer& consumer) const {
  LimitAmounts used = state_.usage().limits().Used(index, consumer);
  if (overlay_) AddInto(used, overlay_->Used(index, consumer));
  return used;
}

std::optional<PendingReasons> CycleLimits::Blocked(const Job& job) const {
  const LimitUsage& usage = state_.usage().limits();
  PendingReasons reasons;
  for (size_t i = 0; i < usage.limits().size(); ++i) {
    const CompiledLimit& limit = usage.limits()[i];
    if (limit.host_scoped() ||
        !usage.Applies(limit, job.spec.user, QueueName(job), job.spec.project)) {
      continue;
    }
    const LimitConsumer consumer =
        LimitUsage::ConsumerOf(limit, job.spec.user, QueueName(job), job.spec.project, kAllHosts);
    const LimitAmounts used = UsedNow(i, consumer);
    auto block = [&](const std::string& resource, int64_t in_use, int64_t max) {
      reasons.Add(ReasonDetail{.code = ReasonCode::kLimit,
                               .resource = resource,
                               .limit = limit.spec.name,
                               .scope = DescribeConsumer(consumer, state_.topology().hosts()),
                               .used = in_use,
                               .max = max});
    };
    if (limit.spec.jobs && used.jobs + 1 > *limit.spec.jobs) {
      block("jobs", used.jobs, *limit.spec.jobs);
    } else if (limit.spec.slots && used.slots + job.min_slots > *limit.spec.slots) {
      block("slots", used.slots, *limit.spec.slots);
    } else {
      for (const auto& [resource, max] : limit.spec.resources) {
        const bool shared = state_.topology().FindSharedResource(resource).has_value();
        const int64_t need = LimitDemand(job, resource, shared);
        const int64_t in_use = Get(used.resources, resource);
        if (need > 0 && in_use + need > max) {
          block(resource, in_use, max);
          break;
        }
      }
    }
  }
  if (reasons.empty()) return std::nullopt;
  return reasons;
}

namespace {

// Room left under a host-scoped limit for one consumer.
struct LimitRoom {
  bool full = false;  // its job count is used up: nothing fits
  int64_t slots = kUnlimited;
  std::vector<ResourceAmount> resources;  // host resources the limit names
};

// The room `spec` leaves given `used`; the binding dimension goes into `detail` (jobs and
// slots override an earlier host's, a resource only fills an empty one).
LimitRoom RoomUnder(const LimitSpec& spec, const LimitAmounts& used, const Job& job,
                    const ClusterState& state, ReasonDetail& detail) {
  LimitRoom room;
  room.full = spec.jobs && used.jobs >= *spec.jobs;
  if (spec.slots) room.slots = *spec.slots - used.slots;
  if (room.full) {
    detail.resource = "jobs";
    detail.used = used.jobs;
    detail.max = *spec.jobs;
  } else if (spec.slots && room.slots < job.min_slots) {
    detail.resource = "slots";
    detail.used = used.slots;
    detail.max = *spec.slots;
  }
  for (const auto& [resource, max] : spec.resources) {
    auto id = state.topology().FindHostResource(resource);
    if (!id) continue;
    const int64_t left = max - Get(used.resources, resource);
    room.resources.push_back(ResourceAmount{*id, std::max<int64_t>(left, 0)});
    if (left <= 0 && detail.resource.empty()) {
      detail.resource = resource;
      detail.used = Get(used.resources, resource);
      detail.max = max;
    }
  }
  return room;
}

// Claims on host h whatever exceeds `room` (everything when `full`), counting the host in
// `detail` when something was claimed.
void ClaimBeyond(HostIndex h, const LimitRoom& room, bool full, Capacity& capacity,
                 ReasonDetail& detail) {
  if (!capacity.AcceptsWork(h)) return;
  HostGrant claim{.host = h};
  const int32_t free = capacity.FreeSlots(h);
  const int64_t excess =
      full ? free : std::max<int64_t>(0, free - std::max<int64_t>(room.slots, 0));
  claim.slots = static_cast<int32_t>(std::min<int64_t>(excess, free));
  for (const ResourceAmount& left : room.resources) {
    const int64_t have = capacity.FreeResource(h, left.id);
    const int64_t over = full ? have : std::max<int64_t>(0, have - left.amount);
    if (over > 0) claim.resources.push_back(ResourceAmount{left.id, over});
  }
  if (claim.slots == 0 && claim.resources.empty()) return;
  capacity.ClaimHost(claim);
  ++detail.hosts;
}

}  // namespace

void CycleLimits::MaskPerHost(size_t index, const Job& job, Capacity& capacity,
                              ReasonDetail& detail) const {
  const LimitUsage& usage = state_.usage().limits();
  const CompiledLimit& limit = usage.limits()[index];
  const LimitSpec& spec = limit.spec;
  const bool zero_max = (spec.jobs && *spec.jobs <= 0) || (spec.slots && *spec.slots <= 0) ||
                        std::any_of(spec.resources.begin(), spec.resources.end(),
                                    [](const auto& r) { return r.second <= 0; });
  // The hosts where the consumer uses something (or, with a zero maximum, every covered host).
  std::set<HostIndex> hosts;
  const LimitConsumer any_host =
      LimitUsage::ConsumerOf(limit, job.spec.user, QueueName(job), job.spec.project, 0);
  if (zero_max) {
    const HostIndex host_count = static_cast<HostIndex>(state_.topology().hosts().size());
    for (HostIndex h = 0; h < host_count; ++h) {
      if (limit.CoversHost(h)) hosts.insert(h);
    }
  } else {
    auto collect = [&](HostIndex h, const LimitAmounts&) { hosts.insert(h); };
    usage.ForEachHostUse(index, any_host, collect);
    if (overlay_) overlay_->ForEachHostUse(index, any_host, collect);
  }
  for (HostIndex h : hosts) {
    LimitConsumer consumer = any_host;
    std::get<3>(consumer) = h;
    if (detail.scope.empty()) detail.scope = DescribeConsumer(consumer, state_.topology().hosts());
    const LimitRoom room = RoomUnder(spec, UsedNow(index, consumer), job, state_, detail);
    ClaimBeyond(h, room, room.full, capacity, detail);
  }
}

void CycleLimits::MaskHostGroup(size_t index, const Job& job, Capacity& capacity, bool whole_groups,
                                ReasonDetail& detail) const {
  const CompiledLimit& limit = state_.usage().limits().limits()[index];
  const LimitConsumer consumer =
      LimitUsage::ConsumerOf(limit, job.spec.user, QueueName(job), job.spec.project, kAllHosts);
  detail.scope = DescribeConsumer(consumer, state_.topology().hosts());
  const LimitRoom room = RoomUnder(limit.spec, UsedNow(index, consumer), job, state_, detail);
  const bool no_room = room.full || room.slots < job.min_slots ||
                       std::any_of(room.resources.begin(), room.resources.end(),
                                   [](const ResourceAmount& r) { return r.amount <= 0; });
  if (!whole_groups && !no_room) return;
  const HostIndex host_count = static_cast<HostIndex>(state_.topology().hosts().size());
  for (HostIndex h = 0; h < host_count; ++h) {
    if (limit.CoversHost(h)) ClaimBeyond(h, room, /*full=*/true, capacity, detail);
  }
}

std::vector<ReasonDetail> CycleLimits::MaskHosts(const Job& job, Capacity& capacity,
                                                 bool whole_groups) const {
  std::vector<ReasonDetail> details;
  const LimitUsage& usage = state_.usage().limits();
  for (size_t i = 0; i < usage.limits().size(); ++i) {
    const CompiledLimit& limit = usage.limits()[i];
    if (!limit.host_scoped() ||
        !usage.Applies(limit, job.spec.user, QueueName(job), job.spec.project)) {
      continue;
    }
    ReasonDetail detail{.code = ReasonCode::kHostLimit, .limit = limit.spec.name};
    if (limit.per_host()) {
      MaskPerHost(i, job, capacity, detail);
    } else {
      MaskHostGroup(i, job, capacity, whole_groups, detail);
    }
    if (detail.hosts > 0) {
      if (detail.resource.empty()) {
        detail.resource = "slots";
        detail.max = limit.spec.slots.value_or(0);
      }
      details.push_back(std::move(detail));
    }
  }
  return details;
}

bool CycleLimits::FitsHostGroups(const Job& job, const Allocation& allocation) const {
  const LimitUsage& usage = state_.usage().limits();
  for (size_t i = 0; i < usage.limits().size(); ++i) {
    const CompiledLimit& limit = usage.limits()[i];
    if (!limit.host_scoped() || limit.per_host() ||
        !usage.Applies(limit, job.spec.user, QueueName(job), job.spec.project)) {
      continue;
    }
    const LimitAmounts used = UsedNow(
        i,
        LimitUsage::ConsumerOf(limit, job.spec.user, QueueName(job), job.spec.project, kAllHosts));
    int64_t slots = 0;
    std::map<std::string, int64_t> resources;
    for (const HostGrant& grant : allocation.hosts) {
      if (!limit.CoversHost(grant.host)) continue;
      slots += grant.slots;
      for (const ResourceAmount& r : grant.resources)
        resources[state_.topology().host_resources()[r.id]] += r.amount;
    }
    if (limit.spec.slots && used.slots + slots > *limit.spec.slots) return false;
    for (const auto& [resource, max] : limit.spec.resources) {
      if (Get(used.resources, resource) + Get(resources, resource) > max) return false;
    }
  }
  return true;
}

void CycleLimits::Charge(const Job& job, const Allocation& allocation) {
  if (!any()) return;
  if (!overlay_) overlay_.emplace(state_.usage().limits().EmptyCopy());
  overlay_->Charge(job, QueueName(job), allocation, +1, state_.topology().host_resources(),
                   state_.topology().shared_resources());
}

}  // namespace sluice::core
