#include "core/alloc/resreq_allocator.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/alloc/primary_allocator.h"

namespace sluice::core {
namespace {

// One grant per host (compound parts may share a host), hosts in index order; shared
// amounts summed per resource.
Allocation Merge(Placement placement) {
  Allocation allocation;
  std::sort(placement.grants.begin(), placement.grants.end(),
            [](const HostGrant& a, const HostGrant& b) { return a.host < b.host; });
  for (HostGrant& grant : placement.grants) {
    if (allocation.hosts.empty() || allocation.hosts.back().host != grant.host) {
      allocation.hosts.push_back(std::move(grant));
      continue;
    }
    HostGrant& merged = allocation.hosts.back();
    merged.slots += grant.slots;
    merged.whole_host = merged.whole_host || grant.whole_host;
    for (const ResourceAmount& r : grant.resources) {
      auto it = std::find_if(merged.resources.begin(), merged.resources.end(),
                             [&](const ResourceAmount& m) { return m.id == r.id; });
      if (it == merged.resources.end()) {
        merged.resources.push_back(r);
      } else {
        it->amount += r.amount;
      }
    }
  }
  std::sort(placement.shared.begin(), placement.shared.end(),
            [](const ResourceAmount& a, const ResourceAmount& b) { return a.id < b.id; });
  for (const ResourceAmount& r : placement.shared) {
    if (!allocation.shared.empty() && allocation.shared.back().id == r.id) {
      allocation.shared.back().amount += r.amount;
    } else {
      allocation.shared.push_back(r);
    }
  }
  return allocation;
}

// Tries one alternative: every part, or none (R-RR-2). Parts are placed in order, each on
// the capacity the earlier ones left. When a part cannot be placed, the search backtracks:
// the previous part is placed again with one of the hosts it took banned, recursively, so a
// part that greedily took the only host a later part can use moves aside, and then with its
// next placement in plan order (seeds/001: the compound is all parts or none; the greedy
// pass alone would miss such placements). The search is bounded by kBudget primary
// attempts, so a compound with many parts may still miss a placement that exists; reasons
// come from the first, greedy pass.
class CompoundSearch {
 public:
  CompoundSearch(const Job& job, const ClusterState& state, const resreq::Compound& compound,
                 Capacity& capacity)
      : job_(job), state_(state), compound_(compound), capacity_(capacity) {}

  bool Run(Placement& placement, PendingReasons& reasons) {
    bans_.assign(compound_.parts.size(), {});
    skips_.assign(compound_.parts.size(), 0);
    return Place(0, placement, &reasons);
  }

 private:
  static constexpr int kBudget = 256;

  // Depth-first: place `part` under its bans; if the later parts then fail, retry it with
  // each host it took banned in turn (a search over ban sets, bounded by the budget).
  bool Place(size_t part, Placement& placement, PendingReasons* reasons) {
    if (part == compound_.parts.size()) return true;
    if (budget_-- <= 0) return false;
    const size_t mark = capacity_.Mark();
    const size_t grants_mark = placement.grants.size();
    const size_t shared_mark = placement.shared.size();
    PendingReasons ignored;
    if (!AllocatePrimary(Task(part), capacity_, placement, reasons ? *reasons : ignored)) {
      return false;
    }
    // Only the first, greedy pass explains a failure.
    if (Place(part + 1, placement, reasons)) return true;
    std::vector<HostIndex> taken;
    for (size_t g = grants_mark; g < placement.grants.size(); ++g) {
      taken.push_back(placement.grants[g].host);
    }
    capacity_.Rollback(mark);
    placement.grants.resize(grants_mark);
    placement.shared.resize(shared_mark);
    for (HostIndex host : taken) {
      bans_[part].push_back(host);
      const bool placed = Place(part, placement, nullptr);
      bans_[part].pop_back();
      if (placed) return true;
      if (budget_ <= 0) return false;
    }
    // Then the part's next placement in plan order (a less consolidated plan, say).
    ++skips_[part];
    const bool placed = Place(part, placement, nullptr);
    --skips_[part];
    return placed;
  }

  PrimaryTask Task(size_t part) const {
    const resreq::Primary& primary = compound_.parts[part];
    return PrimaryTask{.state = state_,
                       .queue = state_.queues()[job_.queue],
                       .primary = primary,
                       .min_tasks = primary.count > 0 ? primary.count : job_.spec.min_tasks,
                       .max_tasks = primary.count > 0 ? primary.count : job_.spec.max_tasks,
                       .exclusive = job_.spec.exclusive,
                       .banned = &bans_[part],
                       .skip = skips_[part]};
  }

  const Job& job_;
  const ClusterState& state_;
  const resreq::Compound& compound_;
  Capacity& capacity_;
  std::vector<std::vector<HostIndex>> bans_;
  std::vector<int32_t> skips_;
  int budget_ = kBudget;
};

bool AllocateCompound(const Job& job, const ClusterState& state, const resreq::Compound& compound,
                      Capacity& capacity, Placement& placement, PendingReasons& reasons) {
  if (compound.parts.size() == 1) {  // a primary: greedy first-fit is exact (plan_iterator.h)
    const resreq::Primary& part = compound.parts[0];
    PrimaryTask task{.state = state,
                     .queue = state.queues()[job.queue],
                     .primary = part,
                     .min_tasks = part.count > 0 ? part.count : job.spec.min_tasks,
                     .max_tasks = part.count > 0 ? part.count : job.spec.max_tasks,
                     .exclusive = job.spec.exclusive};
    return AllocatePrimary(task, capacity, placement, reasons);
  }
  return CompoundSearch(job, state, compound, capacity).Run(placement, reasons);
}

std::string Clause(const ReasonDetail& detail) {
  switch (detail.code) {
    case ReasonCode::kNoResource:
      if (detail.per_host > 0) {
        return "asks " + std::to_string(detail.needed) + " hosts with room for " +
               std::to_string(detail.per_host) + " tasks each" +
               (detail.same.empty() ? "" : " sharing one " + detail.same) + "; " +
               std::to_string(detail.available) + " eligible hosts have room";
      }
      if (!detail.same.empty()) {
        return "asks " + std::to_string(detail.needed) + " " + detail.resource +
               " on hosts sharing one " + detail.same + "; the largest such group has " +
               std::to_string(detail.available);
      }
      if (detail.one_host) {
        return "asks " + std::to_string(detail.needed) + " " + detail.resource +
               " on one host; the largest eligible host has " + std::to_string(detail.available);
      }
      if (detail.resource == "tasks") {
        return "asks " + std::to_string(detail.needed) +
               " tasks; by slots and per-task resources the eligible hosts can hold " +
               std::to_string(detail.available);
      }
      return "asks " + std::to_string(detail.needed) + " " + detail.resource +
             "; the eligible hosts have " + std::to_string(detail.available) + " in total";
    case ReasonCode::kSharedResource:
      return "asks " + detail.resource + "=" + std::to_string(detail.needed) +
             "; the cluster has " + std::to_string(detail.available) + " in total";
    case ReasonCode::kNoMatch:
      return "no host the queue may use satisfies select[]";
    default:
      return std::string(ToString(detail.code));
  }
}

// "asks 10 slots on hosts matching select[type==linux]; the eligible hosts have 3 in total"
std::string DescribeImpossible(const Job& job, const ClusterState& state,
                               const std::vector<PendingReasons>& per_alternative) {
  std::string message;
  for (size_t a = 0; a < per_alternative.size(); ++a) {
    const PendingReasons& reasons = per_alternative[a];
    std::string clauses;
    for (const ReasonDetail& detail : reasons.details) {
      if (detail.code != reasons.main) continue;
      if (!clauses.empty()) clauses += "; ";
      clauses += Clause(detail);
    }
    const resreq::Compound& alternative = job.request->alternatives[a];
    if (alternative.parts.size() == 1 && alternative.parts[0].select != resreq::kNoExpr) {
      const std::string select =
          "select[" + resreq::NormalizeExpr(alternative.parts[0].select, state.expr_pool()) + "]";
      if (reasons.main == ReasonCode::kNoMatch) {
        clauses = "no host the queue may use satisfies " + select;
      } else {
        clauses += " (hosts matching " + select + ")";
      }
    }
    if (per_alternative.size() > 1) clauses = "alternative " + std::to_string(a + 1) + ": " + clauses;
    if (!message.empty()) message += "; ";
    message += clauses;
  }
  return message;
}

}  // namespace

AllocOutcome ResreqAllocator::Nominate(const Job& job, const ClusterState& state,
                                       Capacity& capacity, AllocMode /*mode*/) const {
  AllocOutcome outcome;
  const size_t start = capacity.Mark();
  for (const resreq::Compound& alternative : job.request->alternatives) {
    Placement placement;
    if (AllocateCompound(job, state, alternative, capacity, placement, outcome.reasons)) {
      capacity.Rollback(start);
      outcome.ok = true;
      outcome.reasons = {};
      outcome.allocation = Merge(std::move(placement));
      return outcome;
    }
    capacity.Rollback(start);  // a failed alternative leaves no trace (R-RR-3)
  }
  return outcome;  // the reasons of every alternative, merged
}

Feasibility ResreqAllocator::CheckFeasible(const Job& job, const ClusterState& state,
                                           Capacity& all_configured) const {
  std::vector<PendingReasons> per_alternative;
  const size_t start = all_configured.Mark();
  for (const resreq::Compound& alternative : job.request->alternatives) {
    Placement placement;
    PendingReasons reasons;
    const bool ok = AllocateCompound(job, state, alternative, all_configured, placement, reasons);
    all_configured.Rollback(start);
    if (ok) return {};
    per_alternative.push_back(std::move(reasons));
  }
  return Feasibility{.ok = false, .why = DescribeImpossible(job, state, per_alternative)};
}

}  // namespace sluice::core
