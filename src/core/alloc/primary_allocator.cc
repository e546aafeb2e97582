#include "core/alloc/primary_allocator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "core/alloc/gpu_fit.h"
#include "core/alloc/plan_iterator.h"
#include "core/resreq/eval.h"

namespace sluice::core {

bool HostSelector::Evaluate(HostIndex host, CapacityHostView& view) const {
  if (task_.reference) {
    view.Bind(host);
    return task_.Selects(host, view);
  }
  const uint8_t verdict = verdicts_[host];
  if (verdict == RequestCatalog::kSelectReadsFree && compiled_) {
    if (std::optional<bool> passes = compiled_->Passes(task_.state, capacity_, host)) {
      return *passes;
    }
  }
  view.Bind(host);
  if (verdict == RequestCatalog::kSelectReadsFree) {
    return resreq::EvalSelect(task_.primary.select, task_.state.requests().expr_pool(), view);
  }
  return task_.Selects(host, view);
}

namespace {

// Resource amounts are whole units; a fractional rusage rounds up.
int64_t Units(double amount) { return static_cast<int64_t>(std::ceil(amount)); }

struct Demand {
  std::vector<ResourceAmount> per_task;  // host resources
  std::vector<ResourceAmount> shared;    // per job
  std::vector<std::string> missing;      // resources no host and no cluster defines
  std::vector<int64_t> missing_amounts;
  GpuDemand gpu;                         // devices by index (gpu[] or rusage[gpu=N])
  ResourceId gpu_id = 0;                 // the `gpu` count resource, when gpu.any()
  const std::vector<Host>* hosts = nullptr;  // their devices, when gpu.any()
};

Demand SplitRusage(const resreq::Primary& primary, const ClusterState& state,
                   const Capacity& capacity) {
  Demand demand;
  const std::optional<ResourceId> gpu_id = state.topology().FindHostResource("gpu");
  demand.gpu = GpuDemandOf(primary, gpu_id.has_value());
  if (demand.gpu.any() && gpu_id) {
    demand.gpu_id = *gpu_id;
    demand.hosts = &state.topology().hosts();
    demand.gpu.match = capacity.GpuMatchColumn(state, primary.gpu.model, primary.gpu.mem_mb);
  } else {
    demand.gpu = GpuDemand{};  // gpu[] on a cluster without GPUs: Validate refuses it
  }
  for (const resreq::Rusage& r : primary.rusage) {
    const int64_t units = Units(r.amount);
    if (units == 0) continue;
    if (demand.gpu.any() && r.resource == "gpu") continue;  // taken as devices
    if (auto id = state.topology().FindHostResource(r.resource)) {
      demand.per_task.push_back(ResourceAmount{*id, units});
    } else if (auto shared = state.topology().FindSharedResource(r.resource)) {
      demand.shared.push_back(ResourceAmount{*shared, units});
    } else {
      demand.missing.push_back(r.resource);
      demand.missing_amounts.push_back(units);
    }
  }
  return demand;
}

struct Candidate {
  HostIndex host = 0;
  int32_t fit = 0;  // most tasks of this primary the host can take now
};

// What the host scan found; enough to explain a failure.
struct Scan {
  std::vector<Candidate> eligible;  // passes select, accepts work, has room; host order
  int32_t no_match = 0;
  int32_t closed = 0;
  int32_t unavail = 0;
  int32_t busy = 0;   // exclusive job, host not idle
  int32_t gated = 0;  // withheld for a gated head of an earlier queue
  JobId gated_by = kNoJob;
  int32_t reserved = 0;     // kept by an advance reservation the job would run into
  int32_t reserved_by = -1;  // the first such host's reservation (ReservationBook entry)
  int32_t matching_working = 0;         // pass select and accept work (and idle if exclusive)
  int64_t free_slots = 0;               // over matching working hosts
  std::vector<int64_t> free_resources;  // per demand.per_task entry, same hosts
  int64_t total_fit = 0;
  // GPUs on the same hosts: usable devices, tasks they hold (per task), the largest set
  // one host offers, and how many hosts can take the demand at all.
  int64_t gpu_usable = 0;
  int64_t gpu_task_room = 0;
  int32_t gpu_largest = 0;
  int32_t gpu_hosts = 0;
  HostIndex gpu_last_host = 0;  // names the host when only one matches
};

// The devices of host h the demand may take now, matching gmodel/gmem: free ones, or in
// shared mode those with the memory left.
uint64_t UsableGpus(HostIndex h, const Demand& demand, const Capacity& capacity) {
  const uint64_t free = demand.gpu.shared_mem_mb > 0
                            ? capacity.ShareableGpus((*demand.hosts)[h], demand.gpu.shared_mem_mb)
                            : capacity.FreeGpus(h);
  return demand.gpu.match == nullptr ? free : free & (*demand.gpu.match)[h];
}

int32_t HostFit(HostIndex h, const Demand& demand, const Capacity& capacity) {
  int64_t fit = capacity.FreeSlots(h);
  for (const ResourceAmount& r : demand.per_task) {
    fit = std::min(fit, capacity.FreeResource(h, r.id) / r.amount);
  }
  if (demand.gpu.any() && demand.gpu.shared_mem_mb == 0 && fit > 0) {
    // The `gpu` count bounds it too: a per-host limit on gpu masks counts, not devices.
    // Shared grants are not counted in `gpu`, so neither bounds them.
    const int64_t count = capacity.FreeResource(h, demand.gpu_id);
    fit = std::min<int64_t>(fit, demand.gpu.per_task ? count / demand.gpu.num
                                 : count >= demand.gpu.num ? fit
                                                           : 0);
  }
  if (demand.gpu.any() && fit > 0) {
    fit = std::min<int64_t>(fit, GpuTaskFit(demand.gpu, (*demand.hosts)[h].devices,
                                            UsableGpus(h, demand, capacity)));
  }
  return static_cast<int32_t>(fit);
}

// Best fit over GPUs (R-GPU-3): hosts with the fewest free devices first, host order among
// equals (stable), so partly used hosts fill up and whole hosts stay whole for wide jobs.
// Not with order[], which the user chose instead.
void PackByGpus(const PrimaryTask& task, const Demand& demand, const Capacity& capacity,
                std::vector<Candidate>& hosts) {
  if (!demand.gpu.any() || !task.primary.order.empty()) return;
  std::stable_sort(hosts.begin(), hosts.end(), [&](const Candidate& a, const Candidate& b) {
    return __builtin_popcountll(capacity.FreeGpus(a.host)) <
           __builtin_popcountll(capacity.FreeGpus(b.host));
  });
}

Scan ScanHosts(const PrimaryTask& task, const Demand& demand, const Capacity& capacity) {
  Scan scan;
  scan.free_resources.assign(demand.per_task.size(), 0);
  CapacityHostView view(task.state, capacity, task.reference);
  const HostSelector selector(task, capacity);
  auto visit = [&](HostIndex h) {
    if (!selector.Passes(h, view)) {
      ++scan.no_match;
      return;
    }
    if (!capacity.AcceptsWork(h)) {
      const Host& host = task.state.topology().hosts()[h];
      if (host.membership == HostMembership::kGone) return;  // out of the configuration
      ++(host.spec.state == HostState::kUnavail ? scan.unavail : scan.closed);
      return;
    }
    if (capacity.WithheldFor(h) != kNoJob) {
      ++scan.gated;
      scan.gated_by = capacity.WithheldFor(h);
      return;
    }
    if (!capacity.ReservationAdmits(h, task.reservation)) {
      const int32_t by = capacity.ReservationAgainst(h, task.reservation);
      if (by < 0) {
        ++scan.no_match;  // outside the job's own reservation: not one of its hosts
      } else if (scan.reserved++ == 0) {
        scan.reserved_by = by;
      }
      return;
    }
    if (task.exclusive && !capacity.Idle(h)) {
      ++scan.busy;
      return;
    }
    ++scan.matching_working;
    scan.free_slots += capacity.FreeSlots(h);
    for (size_t i = 0; i < demand.per_task.size(); ++i) {
      scan.free_resources[i] += capacity.FreeResource(h, demand.per_task[i].id);
    }
    if (demand.gpu.any()) {
      const HostDevices& devices = (*demand.hosts)[h].devices;
      const uint64_t usable = UsableGpus(h, demand, capacity);
      const int32_t gpu_fit = GpuTaskFit(demand.gpu, devices, usable);
      scan.gpu_usable += __builtin_popcountll(usable);
      scan.gpu_largest = std::max(scan.gpu_largest, GpuLargestSet(demand.gpu, devices, usable));
      if (gpu_fit > 0) {
        ++scan.gpu_hosts;
        if (demand.gpu.per_task) scan.gpu_task_room += int64_t{gpu_fit} * demand.gpu.num;
      }
      scan.gpu_last_host = h;
    }
    // A full host fits nothing (HostFit is at most the free slots): not worth its rusage.
    const int32_t fit = capacity.FreeSlots(h) > 0 ? HostFit(h, demand, capacity) : 0;
    if (fit <= 0) return;
    scan.eligible.push_back(Candidate{h, fit});
    scan.total_fit += fit;
  };
  task.state.topology().ForEachHostOf(task.queue, visit);
  return scan;
}

// Whether SearchPlans places this primary by PlaceOnePerHost whenever every eligible host
// fits exactly one task (no span, order[] or same[] to shape the plan).
bool OnePerHostShape(const PrimaryTask& task) {
  const resreq::Primary& p = task.primary;
  return p.span.kind == resreq::SpanKind::kNone && p.order.empty() && p.same.empty();
}

// The eligible hosts of ScanHosts (the same hosts, in the same order, with the same fits and
// total) without the counts only an explanation needs: a host without room for one task is
// passed over before select[] is evaluated, and on a queue of all hosts only hosts with a
// free slot are visited (Capacity's index), so a full cluster costs hosts/64 word reads.
// Not on the reference path, which scans every host (the differential test compares them).
//
// `for_placement`: the scan only feeds SearchPlans. Then, once max_tasks hosts fitting one
// task each are found, the rest is only checked for a host with more than one free slot:
// without one, every eligible host fits one task and PlaceOnePerHost takes the first
// max_tasks, which are found already (on one-slot hosts a 4-task job reads 4 hosts, not
// every free one). With one, the scan is done in full.
Scan ScanEligible(const PrimaryTask& task, const Demand& demand, Capacity& capacity,
                  bool for_placement = false) {
  // Under GPU best fit the first hosts in host order are not the ones taken.
  const bool may_stop = for_placement && OnePerHostShape(task) && !demand.gpu.any();
  bool stopped = false;
  bool wider_host = false;  // after stopping: some host has more than one free slot
  Scan scan;
  // At most one candidate per free slot: one allocation instead of a growth sequence.
  int64_t most =
      std::min<int64_t>(capacity.TotalFree(), static_cast<int64_t>(capacity.host_count()));
  if (may_stop) most = std::min<int64_t>(most, task.max_tasks);
  scan.eligible.reserve(static_cast<size_t>(most));
  CapacityHostView view(task.state, capacity);
  const HostSelector selector(task, capacity);
  auto visit = [&](HostIndex h) {
    if (stopped) {
      wider_host = wider_host || capacity.FreeSlots(h) > 1;
      return;
    }
    if (selector.KnownToFail(h)) return;
    const int32_t fit = HostFit(h, demand, capacity);
    if (fit <= 0 || !capacity.AcceptsWork(h) || capacity.WithheldFor(h) != kNoJob) return;
    if (!capacity.ReservationAdmits(h, task.reservation)) return;
    if (task.exclusive && !capacity.Idle(h)) return;
    if (!selector.Passes(h, view)) return;
    scan.eligible.push_back(Candidate{h, fit});
    scan.total_fit += fit;
    stopped = may_stop && scan.total_fit == task.max_tasks &&
              scan.total_fit == static_cast<int64_t>(scan.eligible.size());
  };
  if (task.queue.all_hosts && may_stop && capacity.MaxHostSlots() <= 1) {
    // No host can be wider than one slot: the walk ends at the max_tasks-th eligible host,
    // from the first host with a free slot, instead of visiting every free host.
    capacity.ForEachHostWithFreeFrom(capacity.FirstMaybeFree(), [&](HostIndex h) {
      visit(h);
      return !stopped;
    });
  } else if (task.queue.all_hosts) {
    capacity.ForEachHostWithFree(visit);
  } else {
    for (HostIndex h : task.queue.hosts) {
      if (capacity.FreeSlots(h) > 0) visit(h);
    }
  }
  if (wider_host) return ScanEligible(task, demand, capacity);
  return scan;
}

// Whether two attribute values are equal. Values are short (rack names) and neighbouring
// hosts mostly share one, so an inline byte loop beats a call to memcmp per host.
bool SameText(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Host groups to try when same[attr] is asked: one per value, in value order; hosts keep
// their order within a group.
std::vector<std::vector<Candidate>> SameGroups(const PrimaryTask& task, const Capacity& capacity,
                                               const Scan& scan) {
  // Views of the hosts' own strings (no copies), read from the cycle's attribute column
  // (one array read per host; the reference path searches each host's map); neighbouring
  // hosts often share a value (racks), so the last group is tried before the map.
  const std::vector<const std::string*>* column =
      task.reference ? nullptr : &capacity.AttributeColumn(task.state, task.primary.same);
  // 1. Each eligible host's group (by first appearance; kNone: no value), and group sizes.
  constexpr uint32_t kNone = ~uint32_t{0};
  std::map<std::string_view, uint32_t> by_value;
  std::vector<uint32_t> group_of(scan.eligible.size(), kNone);
  std::vector<uint32_t> sizes;
  uint32_t last = kNone;
  std::string_view last_value;
  for (size_t i = 0; i < scan.eligible.size(); ++i) {
    const Candidate& c = scan.eligible[i];
    const std::string* found = nullptr;
    if (column != nullptr) {
      found = (*column)[c.host];
    } else {
      const auto& attributes = task.state.topology().hosts()[c.host].spec.attributes;
      auto it = attributes.find(task.primary.same);
      if (it != attributes.end()) found = &it->second;
    }
    if (found == nullptr) continue;  // cannot share a value it does not have
    const std::string_view value = *found;
    if (last == kNone || !SameText(value, last_value)) {
      last = by_value.try_emplace(value, static_cast<uint32_t>(sizes.size())).first->second;
      if (last == sizes.size()) sizes.push_back(0);
      last_value = value;
    }
    group_of[i] = last;
    ++sizes[last];
  }
  // 2. The groups filled in host order (each sized once), 3. listed in value order.
  std::vector<std::vector<Candidate>> filled(sizes.size());
  for (size_t g = 0; g < sizes.size(); ++g) filled[g].reserve(sizes[g]);
  for (size_t i = 0; i < scan.eligible.size(); ++i) {
    if (group_of[i] != kNone) filled[group_of[i]].push_back(scan.eligible[i]);
  }
  std::vector<std::vector<Candidate>> groups;
  groups.reserve(filled.size());
  for (const auto& [value, g] : by_value) groups.push_back(std::move(filled[g]));
  return groups;
}

// The reference form of OrderHosts: a stable sort comparing the optional keys as order[]
// defines them.
void OrderHostsReference(const PrimaryTask& task, const Capacity& capacity,
                         std::vector<Candidate>& hosts) {
  CapacityHostView view(task.state, capacity, task.reference);
  const size_t width = task.primary.order.size();
  struct Keyed {
    Candidate candidate;
    size_t row = 0;
  };
  std::vector<Keyed> keyed;
  std::vector<std::optional<double>> keys;
  keyed.reserve(hosts.size());
  keys.reserve(hosts.size() * width);
  for (const Candidate& c : hosts) {
    view.Bind(c.host);
    keyed.push_back(Keyed{c, keyed.size()});
    for (const resreq::OrderKey& key : task.primary.order)
      keys.push_back(resreq::EvalOrderKey(key, view));
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const Keyed& a, const Keyed& b) {
    for (size_t i = 0; i < width; ++i) {
      const auto& x = keys[a.row * width + i];
      const auto& y = keys[b.row * width + i];
      if (x.has_value() != y.has_value()) return x.has_value();
      if (!x || *x == *y) continue;
      return task.primary.order[i].descending ? *x > *y : *x < *y;
    }
    return false;
  });
  for (size_t i = 0; i < hosts.size(); ++i) hosts[i] = keyed[i].candidate;
}

// A host's first order[] key as OrderHosts sorts it (ascending; +infinity when missing),
// and its row among the hosts sorted.
struct KeyedHost {
  double first = 0;
  uint32_t row = 0;
};

// Sorts `keyed` by key, stably, when every key is a whole number within a small range or
// +infinity (free slots, slot counts: the common order[]): a counting sort, O(hosts + range)
// where the merge sort costs O(hosts log hosts), with the same result (equal keys keep their
// order, missing ones come last). False, leaving `keyed` as it was, for other keys.
bool CountingSortKeys(std::vector<KeyedHost>& keyed) {
  constexpr double kMaxRange = 4096;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (const KeyedHost& k : keyed) {
    if (std::isinf(k.first)) continue;  // a missing key: only +infinity (keys are finite)
    if (k.first != std::floor(k.first)) return false;
    lo = std::min(lo, k.first);
    hi = std::max(hi, k.first);
  }
  if (lo <= hi && hi - lo > kMaxRange) return false;
  // Buckets 0..range by value - lo, then one for missing keys.
  const size_t missing = lo <= hi ? static_cast<size_t>(hi - lo) + 1 : 0;
  auto bucket = [&](double key) {
    return std::isinf(key) ? missing : static_cast<size_t>(key - lo);
  };
  std::vector<uint32_t> next(missing + 2, 0);
  for (const KeyedHost& k : keyed) ++next[bucket(k.first) + 1];
  for (size_t b = 1; b < next.size(); ++b) next[b] += next[b - 1];
  std::vector<KeyedHost> sorted(keyed.size());
  for (const KeyedHost& k : keyed) sorted[next[bucket(k.first)]++] = k;
  keyed = std::move(sorted);
  return true;
}

// Sorts a group by the order[] keys (stable: ties keep host order); hosts without a value
// for a key come last for that key. Keys are finite (EvalOrderKey), so each becomes one
// double that sorts ascending: negated when descending, +infinity when missing. Keys after
// the first sit in one flat array (row i: the keys of the i-th host).
void OrderHosts(const PrimaryTask& task, const Capacity& capacity, std::vector<Candidate>& hosts) {
  if (task.primary.order.empty()) return;
  if (task.reference) return OrderHostsReference(task, capacity, hosts);
  CapacityHostView view(task.state, capacity);
  const std::vector<resreq::OrderKey>& order = task.primary.order;
  const size_t width = order.size();
  // `slots` always resolves to the free slots (HostView::Free): read them directly. The
  // names are compared once here, not once per host.
  std::vector<uint8_t> reads_slots(width);
  for (size_t i = 0; i < width; ++i) reads_slots[i] = order[i].name == "slots";
  auto sort_key = [&](size_t i, HostIndex host) {
    const std::optional<double> value = reads_slots[i]
                                            ? std::optional<double>(capacity.FreeSlots(host))
                                            : resreq::EvalOrderKey(order[i], view);
    if (!value) return std::numeric_limits<double>::infinity();
    return order[i].descending ? -*value : *value;
  };
  std::vector<KeyedHost> keyed;
  std::vector<double> rest;  // keys 2..width of each row
  keyed.reserve(hosts.size());
  rest.reserve(hosts.size() * (width - 1));
  for (const Candidate& c : hosts) {
    view.Bind(c.host);
    keyed.push_back(KeyedHost{sort_key(0, c.host), static_cast<uint32_t>(keyed.size())});
    for (size_t i = 1; i < width; ++i) rest.push_back(sort_key(i, c.host));
  }
  // Stable, and comparing keys only: hosts share few key values (slot counts), and a
  // merge sort gains from the long runs of ties where a sort by (key, position) does not.
  // One key of whole numbers in a small range (`-slots`) is counted instead.
  if (width == 1 && CountingSortKeys(keyed)) {
    std::vector<Candidate> sorted;
    sorted.reserve(hosts.size());
    for (const KeyedHost& k : keyed) sorted.push_back(hosts[k.row]);
    hosts = std::move(sorted);
    return;
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const KeyedHost& a, const KeyedHost& b) {
    if (a.first != b.first) return a.first < b.first;
    for (size_t i = 0; i + 1 < width; ++i) {
      const double x = rest[a.row * (width - 1) + i];
      const double y = rest[b.row * (width - 1) + i];
      if (x != y) return x < y;
    }
    return false;
  });
  std::vector<Candidate> sorted;
  sorted.reserve(hosts.size());
  for (const KeyedHost& k : keyed) sorted.push_back(hosts[k.row]);
  hosts = std::move(sorted);
}

HostGrant GrantFor(const Candidate& c, int32_t tasks, const Demand& demand, bool exclusive,
                   const Capacity& capacity) {
  HostGrant grant{.host = c.host, .slots = tasks, .whole_host = exclusive};
  for (const ResourceAmount& r : demand.per_task) {
    grant.resources.push_back(ResourceAmount{r.id, r.amount * tasks});
  }
  if (!demand.gpu.any()) return grant;
  const HostDevices& devices = (*demand.hosts)[c.host].devices;
  const uint64_t free = capacity.FreeGpus(c.host);
  uint64_t usable = UsableGpus(c.host, demand, capacity);
  if (demand.gpu.shared_mem_mb > 0) {
    // Devices others already share first, when they are enough: free ones stay whole.
    if (const uint64_t sharing = usable & ~free; GpuTaskFit(demand.gpu, devices, sharing) >= tasks) {
      usable = sharing;
    }
  }
  // The fit proved a set exists, so the pick cannot come back empty.
  grant.gpus = PickGpus(demand.gpu, devices, usable, free, tasks);
  SLUICE_CHECK(grant.gpus != 0);
  if (demand.gpu.shared_mem_mb > 0) {
    grant.gpu_mem_mb = demand.gpu.shared_mem_mb;  // not counted in `gpu`: others share them
  } else {
    grant.resources.push_back(ResourceAmount{demand.gpu_id, __builtin_popcountll(grant.gpus)});
  }
  return grant;
}

// Tries one plan: every bucket, largest first, on a distinct host. A fresh host iterator per
// bucket starts at the first host; consecutive buckets of equal size continue from where the
// previous one stopped, which yields exactly the same hosts (every host before that point
// is claimed or too small for this size, and claims change no other host's fit).
bool TryPlan(const std::vector<int32_t>& buckets, const std::vector<Candidate>& hosts,
             const Demand& demand, bool exclusive, Capacity& capacity, Placement& placement,
             std::vector<uint8_t>& claimed) {
  const size_t mark = capacity.Mark();
  const size_t grants_mark = placement.grants.size();
  placement.grants.reserve(grants_mark + buckets.size());  // one grant per bucket
  claimed.assign(hosts.size(), 0);
  size_t cursor = 0;
  for (size_t b = 0; b < buckets.size(); ++b) {
    if (b == 0 || buckets[b] != buckets[b - 1]) cursor = 0;
    bool found = false;
    for (; cursor < hosts.size(); ++cursor) {
      if (claimed[cursor] || hosts[cursor].fit < buckets[b]) continue;
      HostGrant grant = GrantFor(hosts[cursor], buckets[b], demand, exclusive, capacity);
      capacity.ClaimHost(grant);
      placement.grants.push_back(std::move(grant));
      claimed[cursor] = 1;
      ++cursor;
      found = true;
      break;
    }
    if (!found) {
      capacity.Rollback(mark);
      placement.grants.resize(grants_mark);
      return false;
    }
  }
  return true;
}

// The fits of a group, largest first. Fits are bounded by host slots, so a counting sort
// keeps this O(hosts) for the big one-slot-host clusters the plan pruning is for.
void SortedFits(const std::vector<Candidate>& group, std::vector<int32_t>& fits) {
  fits.clear();
  int32_t largest = 0;
  for (const Candidate& c : group) largest = std::max(largest, c.fit);
  if (largest > 4096) {
    for (const Candidate& c : group) fits.push_back(c.fit);
    std::sort(fits.rbegin(), fits.rend());
    return;
  }
  std::vector<int32_t> count(static_cast<size_t>(largest) + 1, 0);
  for (const Candidate& c : group) ++count[static_cast<size_t>(c.fit)];
  for (int32_t fit = largest; fit >= 1; --fit) fits.insert(fits.end(), count[fit], fit);
}

// SearchPlans when every eligible host can take exactly one task (one-slot hosts, the big
// traces' clusters): without a span, order[] or same[], the only feasible plan for T tasks is
// T buckets of one, which TryPlan places on the first T hosts in host order; T is the largest
// count in the task range that the hosts hold. The same grants, claimed in the same order,
// without the fits' sort, the plan iterator and the claimed flags. nullopt: not this case.
std::optional<bool> PlaceOnePerHost(const PrimaryTask& task, const Demand& demand, const Scan& scan,
                                    Capacity& capacity, Placement& placement) {
  if (!OnePerHostShape(task)) return std::nullopt;
  if (scan.total_fit != static_cast<int64_t>(scan.eligible.size())) return std::nullopt;
  const int64_t tasks = std::min<int64_t>(task.max_tasks, scan.total_fit);
  if (tasks < task.min_tasks) return false;
  placement.grants.reserve(placement.grants.size() + static_cast<size_t>(tasks));
  for (int64_t i = 0; i < tasks; ++i) {
    HostGrant grant =
        GrantFor(scan.eligible[static_cast<size_t>(i)], 1, demand, task.exclusive, capacity);
    capacity.ClaimHost(grant);
    placement.grants.push_back(std::move(grant));
  }
  return true;
}

bool SearchPlans(const PrimaryTask& task, const Demand& demand, Scan& scan, Capacity& capacity,
                 Placement& placement) {
  PackByGpus(task, demand, capacity, scan.eligible);
  if (!task.reference) {
    if (std::optional<bool> placed = PlaceOnePerHost(task, demand, scan, capacity, placement)) {
      return *placed;
    }
  }
  std::vector<std::vector<Candidate>> same_groups;
  if (!task.primary.same.empty()) same_groups = SameGroups(task, capacity, scan);
  std::vector<std::vector<Candidate>>* groups = &same_groups;
  std::vector<std::vector<Candidate>> all;
  if (task.primary.same.empty()) {
    all.push_back(std::move(scan.eligible));
    groups = &all;
  }
  for (auto& group : *groups) OrderHosts(task, capacity, group);
  std::vector<uint8_t> claimed;
  std::vector<int32_t> fits;
  bool placed = false;
  for (int32_t tasks = task.max_tasks; tasks >= task.min_tasks && !placed; --tasks) {
    if (tasks > scan.total_fit) continue;  // R-RR-6: skip counts above the free capacity
    for (const std::vector<Candidate>& group : *groups) {
      SortedFits(group, fits);
      PlanShape shape{.tasks = tasks,
                      .one_host = task.primary.span.kind == resreq::SpanKind::kOneHost,
                      .ptile = task.primary.span.kind == resreq::SpanKind::kPtile
                                   ? task.primary.span.ptile
                                   : 0};
      for (PlanIterator plan(shape, fits); plan.Valid() && !placed; plan.Next()) {
        placed = TryPlan(plan.value(), group, demand, task.exclusive, capacity, placement, claimed);
      }
      if (placed) break;
    }
  }
  if (task.primary.same.empty()) scan.eligible = std::move(all.front());  // for explanations
  return placed;
}

// Why `hosts` cannot hold the primary's tasks in the shape it asks, with needed > available:
// one host (the largest fit), ptile (hosts that can take a full chunk of K, plus one for the
// remainder), or plain (the total fit).
// `matching` is how many hosts match and accept work (those in `hosts` have room).
ReasonDetail ShapeShortage(const PrimaryTask& task, const std::vector<Candidate>& hosts,
                           int32_t matching) {
  const int32_t tasks = task.min_tasks;
  ReasonDetail detail{.code = ReasonCode::kNoResource, .resource = "slots", .hosts = matching};
  switch (task.primary.span.kind) {
    case resreq::SpanKind::kOneHost: {
      int64_t biggest = 0;
      for (const Candidate& c : hosts) biggest = std::max<int64_t>(biggest, c.fit);
      detail.needed = tasks;
      detail.available = biggest;
      detail.one_host = true;
      break;
    }
    case resreq::SpanKind::kPtile: {
      const int32_t k = task.primary.span.ptile;
      const int32_t full = tasks / k;
      const int32_t rem = tasks % k;
      int32_t fit_full = 0;
      int32_t fit_rem = 0;
      for (const Candidate& c : hosts) {
        if (c.fit >= k) ++fit_full;
        if (rem > 0 && c.fit >= rem) ++fit_rem;
      }
      const int32_t chunks = std::min(fit_full, full);
      detail.resource = "hosts";
      detail.per_host = k;
      detail.needed = full + (rem > 0 ? 1 : 0);
      detail.available = chunks + (rem > 0 && fit_rem > chunks ? 1 : 0);
      break;
    }
    case resreq::SpanKind::kNone: {
      // Free slots and resources suffice in total, but not on the same hosts.
      int64_t total = 0;
      for (const Candidate& c : hosts) total += c.fit;
      detail.resource = "tasks";
      detail.needed = tasks;
      detail.available = total;
      break;
    }
  }
  return detail;
}

// What is short of GPUs on the matching hosts that accept work, if anything: per task, the
// devices in total; per host, a host with a set the demand accepts (its constraints named).
void AddGpuShortage(const PrimaryTask& task, const Demand& demand, const Scan& scan,
                    PendingReasons& reasons) {
  const GpuDemand& gpu = demand.gpu;
  ReasonDetail detail{.code = ReasonCode::kNoResource,
                      .resource = "gpu",
                      .hosts = scan.matching_working,
                      .devices = GpuConstraintText(task.primary.gpu)};
  if (gpu.per_task) {
    detail.needed = gpu.NeedFor(task.min_tasks);
    detail.available = gpu.link || gpu.affinity ? scan.gpu_task_room : scan.gpu_usable;
  } else {
    if (scan.gpu_hosts > 0) return;  // some host takes it: the shape explains the rest
    detail.needed = gpu.num;
    detail.available = scan.gpu_largest;
    detail.one_host = true;
  }
  if (detail.available >= detail.needed) return;
  if (scan.matching_working == 1) {
    detail.scope = "host " + task.state.topology().hosts()[scan.gpu_last_host].spec.name;
  }
  reasons.Add(std::move(detail));
}

// HOST_RESERVED (R-RSV-2): how many matching hosts advance reservations keep from the job,
// naming the first one's reservation, its hosts and the window the job would run into.
void AddReservedHosts(const Scan& scan, const Capacity& capacity, PendingReasons& reasons) {
  ReasonDetail detail{.code = ReasonCode::kHostReserved, .hosts = scan.reserved};
  if (scan.reserved_by >= 0) {
    const ReservationBook& book = *capacity.reservations();
    detail.scope = "reservation " + book.spec(scan.reserved_by).name;
    detail.host_names = book.HostList(scan.reserved_by);
    if (auto w = book.NextWindow(scan.reserved_by, capacity.reservation_now())) {
      detail.time = w->begin;
      detail.until = w->end;
    }
  }
  reasons.Add(std::move(detail));
}

// Reasons for a primary that found no placement (R-PR-1): host-level counts first, then
// what is short on the matching hosts that accept work, or else the shape that does not fit.
void ExplainFailure(const PrimaryTask& task, const Demand& demand, const Scan& scan,
                    const Capacity& capacity, PendingReasons& reasons) {
  const size_t first = reasons.details.size();
  auto host_reason = [&](ReasonCode code, int32_t hosts) {
    if (hosts > 0) reasons.Add(ReasonDetail{.code = code, .hosts = hosts});
  };
  host_reason(ReasonCode::kNoMatch, scan.no_match);
  host_reason(ReasonCode::kHostUnavail, scan.unavail);
  host_reason(ReasonCode::kHostClosed, scan.closed);
  host_reason(ReasonCode::kExclusive, scan.busy);
  if (scan.reserved > 0) AddReservedHosts(scan, capacity, reasons);
  if (scan.gated > 0) {
    reasons.Add(ReasonDetail{.code = ReasonCode::kGated,
                             .hosts = scan.gated,
                             .job = scan.gated_by,
                             .time = capacity.withheld_since()});
  }
  // With no matching host that accepts work, the host-level reasons say it all (unless
  // there are no hosts at all).
  if (scan.matching_working == 0 && reasons.details.size() > first) return;
  const int64_t tasks = task.min_tasks;
  const size_t shortages = reasons.details.size();
  if (scan.free_slots < tasks) {
    reasons.Add(ReasonDetail{.code = ReasonCode::kNoResource,
                             .resource = "slots",
                             .needed = tasks,
                             .available = scan.free_slots,
                             .hosts = scan.matching_working});
  }
  if (demand.gpu.any()) AddGpuShortage(task, demand, scan, reasons);
  for (size_t i = 0; i < demand.per_task.size(); ++i) {
    const int64_t needed = demand.per_task[i].amount * tasks;
    if (scan.free_resources[i] >= needed) continue;
    reasons.Add(
        ReasonDetail{.code = ReasonCode::kNoResource,
                     .resource = task.state.topology().host_resources()[demand.per_task[i].id],
                     .needed = needed,
                     .available = scan.free_resources[i],
                     .hosts = scan.matching_working});
  }
  for (size_t i = 0; i < demand.missing.size(); ++i) {
    reasons.Add(ReasonDetail{.code = ReasonCode::kNoResource,
                             .resource = demand.missing[i],
                             .needed = demand.missing_amounts[i] * tasks});
  }
  if (reasons.details.size() > shortages) return;
  // Enough in total, but not in the shape asked: a span, or same[] groups too small. Under
  // same[] the group that comes closest is described.
  if (task.primary.same.empty()) {
    reasons.Add(ShapeShortage(task, scan.eligible, scan.matching_working));
    return;
  }
  std::optional<ReasonDetail> best;
  for (const std::vector<Candidate>& group : SameGroups(task, capacity, scan)) {
    ReasonDetail detail = ShapeShortage(task, group, static_cast<int32_t>(group.size()));
    if (!best || detail.available * best->needed > best->available * detail.needed) best = detail;
  }
  if (!best) best = ShapeShortage(task, {}, 0);
  best->same = task.primary.same;
  reasons.Add(*best);
}

void ClaimShared(const Demand& demand, Capacity& capacity, Placement& placement) {
  for (const ResourceAmount& r : demand.shared) {
    capacity.ClaimShared(r);
    placement.shared.push_back(r);
  }
}

// FirstHostFits under GPU best fit: the host with the fewest free devices that takes every
// task (`fits`), the first such host in PackByGpus's order, read from the capacity's index by
// free count. nullopt: none.
template <typename Fits>
std::optional<HostIndex> BestGpuHost(const PrimaryTask& task, const Demand& demand,
                                     Capacity& capacity, Fits&& fits) {
  const int64_t need = demand.gpu.NeedFor(task.max_tasks);
  if (need > kMaxGpusPerHost) return std::nullopt;
  std::optional<HostIndex> found;
  auto in_queue = [&](HostIndex h) {
    return task.queue.all_hosts ||
           std::binary_search(task.queue.hosts.begin(), task.queue.hosts.end(), h);
  };
  // Shared mode packs onto devices already shared before it takes free ones: first a host
  // whose shared devices alone take the job (its free ones stay whole), in host order.
  if (demand.gpu.shared_mem_mb > 0) {
    capacity.ForEachHostSharingGpus(task.state.topology(), [&](HostIndex h) {
      if (!in_queue(h)) return true;
      const uint64_t sharing = UsableGpus(h, demand, capacity) & ~capacity.FreeGpus(h);
      if (GpuTaskFit(demand.gpu, (*demand.hosts)[h].devices, sharing) >= task.max_tasks &&
          fits(h)) {
        found = h;
      }
      return !found;
    });
  }
  // Then by free devices, fewest first; a shared job may add free ones to shared ones, so a
  // host with one free device may do.
  if (!found) {
    const int32_t free_needed = demand.gpu.shared_mem_mb > 0 ? 1 : static_cast<int32_t>(need);
    capacity.ForEachHostByFreeGpus(free_needed, [&](HostIndex h) {
      if (in_queue(h) && fits(h)) found = h;
      return !found;
    });
  }
  return found;
}

// The plan [max_tasks] tried directly: it is the first plan SearchPlans would try whenever
// some host can take max_tasks (k = 1), and TryPlan would take the first such host in host
// order. Not used with order[] or same[] (they change which host or group comes first).
bool FirstHostFits(const PrimaryTask& task, const Demand& demand, Capacity& capacity,
                   Placement& placement) {
  const resreq::Primary& p = task.primary;
  if (!p.order.empty() || !p.same.empty() || !demand.missing.empty()) return false;
  if (p.span.kind == resreq::SpanKind::kPtile && p.span.ptile < task.max_tasks) return false;
  // No host has more free slots than all of them together, or than the largest host has
  // (checked before the view and selector are made: on one-slot hosts every multi-task
  // job stops here).
  if (task.max_tasks > capacity.TotalFree() || task.max_tasks > capacity.MaxHostSlots())
    return false;
  CapacityHostView view(task.state, capacity, task.reference);
  const HostSelector selector(task, capacity);
  auto fits = [&](HostIndex h) {
    if (capacity.WithheldFor(h) != kNoJob) return false;
    if (!capacity.AcceptsWork(h) || capacity.FreeSlots(h) < task.max_tasks) return false;
    if (task.exclusive && !capacity.Idle(h)) return false;
    if (!capacity.ReservationAdmits(h, task.reservation)) return false;
    return selector.Passes(h, view) && HostFit(h, demand, capacity) >= task.max_tasks;
  };
  auto claim = [&](HostIndex h) {
    HostGrant grant =
        GrantFor(Candidate{h, task.max_tasks}, task.max_tasks, demand, task.exclusive, capacity);
    capacity.ClaimHost(grant);
    placement.grants.push_back(std::move(grant));
    return true;
  };
  if (demand.gpu.any()) {
    const std::optional<HostIndex> found = BestGpuHost(task, demand, capacity, fits);
    return found && claim(*found);
  }
  if (task.queue.all_hosts) {
    HostIndex start = capacity.FirstMaybeFree();
    if (p.select == resreq::kNoExpr && task.max_tasks > 0) {
      // A host that fits has a free slot: only those are visited.
      std::optional<HostIndex> found;
      capacity.ForEachHostWithFreeFrom(start, [&](HostIndex h) {
        if (fits(h)) found = h;
        return !found;
      });
      return found && claim(*found);
    }
    if (p.select == resreq::kNoExpr) {
      for (HostIndex h = start; h < capacity.host_count(); ++h) {
        if (fits(h)) return claim(h);
      }
      return false;
    }
    // Skip the front of hosts known to fail the select or to be full, and extend it while
    // scanning: a static select's verdict never changes within a cycle and free slots only
    // shrink, so those hosts stay useless for every job with this select.
    const bool static_select = task.state.requests().SelectIsStatic(p.select);
    HostIndex& cursor = capacity.SelectCursor(p.select);
    if (static_select) start = std::max(start, cursor);
    bool in_front = static_select;
    for (HostIndex h = start; h < capacity.host_count(); ++h) {
      if (fits(h)) return claim(h);
      if (!in_front) continue;
      if (capacity.FreeSlots(h) == 0 || !selector.Passes(h, view)) {
        cursor = h + 1;
      } else {
        in_front = false;
      }
    }
    return false;
  } else {
    for (HostIndex h : task.queue.hosts) {
      if (fits(h)) return claim(h);
    }
  }
  return false;
}

}  // namespace

bool AllocatePrimary(const PrimaryTask& task, Capacity& capacity, Placement& placement,
                     PendingReasons& reasons) {
  const Demand demand = SplitRusage(task.primary, task.state, capacity);
  // 1. Shared resources, once per primary (R-AL-4).
  bool shared_ok = true;
  for (const ResourceAmount& r : demand.shared) {
    if (capacity.FreeShared(r.id) >= r.amount) continue;
    shared_ok = false;
    reasons.Add(ReasonDetail{.code = ReasonCode::kSharedResource,
                             .resource = task.state.topology().shared_resources()[r.id],
                             .needed = r.amount,
                             .available = capacity.FreeShared(r.id)});
  }
  if (!shared_ok) return false;
  // 2. The first plan of every search is all tasks on one host; when some host can take
  // them, the first such host in host order is the answer, found without a full scan.
  if (!task.reference && FirstHostFits(task, demand, capacity, placement)) {
    ClaimShared(demand, capacity, placement);
    return true;
  }
  // 3. Hosts that pass select[] and have room; 4. plans over them. 5. Why none fits.
  if (task.reference) {
    Scan scan = ScanHosts(task, demand, capacity);
    if (demand.missing.empty() && SearchPlans(task, demand, scan, capacity, placement)) {
      ClaimShared(demand, capacity, placement);
      return true;
    }
    ExplainFailure(task, demand, scan, capacity, reasons);
    return false;
  }
  // The placement needs only the eligible hosts (ScanEligible: the same hosts, order and
  // fits as ScanHosts, without visiting full hosts); the counts of every host are scanned
  // only when a failure is to be explained, so an explained start costs what an unexplained
  // one does (issue 45).
  Scan scan = ScanEligible(task, demand, capacity, /*for_placement=*/true);
  if (demand.missing.empty() && SearchPlans(task, demand, scan, capacity, placement)) {
    ClaimShared(demand, capacity, placement);
    return true;
  }
  if (!task.explain_failure) return false;
  Scan counted = ScanHosts(task, demand, capacity);
  // SearchPlans packed the eligible hosts by GPUs; the explanation sees them in that order.
  if (demand.missing.empty()) PackByGpus(task, demand, capacity, counted.eligible);
  ExplainFailure(task, demand, counted, capacity, reasons);
  return false;
}

namespace {

// Depth-first over the buckets of one plan: bucket `b` on each unclaimed host that fits it,
// in host order; a complete assignment is offered to `next`.
bool AssignBuckets(const std::vector<int32_t>& buckets, size_t b,
                   const std::vector<Candidate>& hosts, const Demand& demand, bool exclusive,
                   Capacity& capacity, Placement& placement, std::vector<uint8_t>& claimed,
                   int64_t& budget, const std::function<bool()>& complete) {
  if (b == buckets.size()) return complete();
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (claimed[i] || hosts[i].fit < buckets[b]) continue;
    if (budget-- <= 0) return false;
    const size_t mark = capacity.Mark();
    HostGrant grant = GrantFor(hosts[i], buckets[b], demand, exclusive, capacity);
    capacity.ClaimHost(grant);
    placement.grants.push_back(std::move(grant));
    claimed[i] = 1;
    if (AssignBuckets(buckets, b + 1, hosts, demand, exclusive, capacity, placement, claimed,
                      budget, complete)) {
      return true;
    }
    claimed[i] = 0;
    placement.grants.pop_back();
    capacity.Rollback(mark);
    if (budget <= 0) return false;
  }
  return false;
}

}  // namespace

bool EnumeratePlacements(const PrimaryTask& task, Capacity& capacity, Placement& placement,
                         int64_t& budget, const std::function<bool()>& next) {
  const Demand demand = SplitRusage(task.primary, task.state, capacity);
  if (!demand.missing.empty()) return false;
  for (const ResourceAmount& r : demand.shared) {
    if (capacity.FreeShared(r.id) < r.amount) return false;
  }
  // Only the eligible hosts matter here: a search never explains.
  Scan scan =
      task.reference ? ScanHosts(task, demand, capacity) : ScanEligible(task, demand, capacity);
  PackByGpus(task, demand, capacity, scan.eligible);
  std::vector<std::vector<Candidate>> groups;
  if (task.primary.same.empty()) {
    groups.push_back(scan.eligible);
  } else {
    groups = SameGroups(task, capacity, scan);
  }
  for (auto& group : groups) OrderHosts(task, capacity, group);
  const PlanShape base{
      .one_host = task.primary.span.kind == resreq::SpanKind::kOneHost,
      .ptile = task.primary.span.kind == resreq::SpanKind::kPtile ? task.primary.span.ptile : 0};
  // A complete assignment takes the primary's shared resources, then asks `next`.
  const std::function<bool()> complete = [&]() {
    const size_t mark = capacity.Mark();
    const size_t shared_mark = placement.shared.size();
    ClaimShared(demand, capacity, placement);
    if (next()) return true;
    placement.shared.resize(shared_mark);
    capacity.Rollback(mark);
    return false;
  };
  std::vector<int32_t> fits;
  std::vector<uint8_t> claimed;
  for (int32_t tasks = task.max_tasks; tasks >= task.min_tasks && budget > 0; --tasks) {
    if (tasks > scan.total_fit) continue;
    for (const std::vector<Candidate>& group : groups) {
      SortedFits(group, fits);
      PlanShape shape = base;
      shape.tasks = tasks;
      for (PlanIterator plan(shape, fits); plan.Valid() && budget > 0; plan.Next()) {
        claimed.assign(group.size(), 0);
        if (AssignBuckets(plan.value(), 0, group, demand, task.exclusive, capacity, placement,
                          claimed, budget, complete)) {
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace sluice::core
