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
  const bool distinct_in_order =
      std::adjacent_find(placement.grants.begin(), placement.grants.end(),
                         [](const HostGrant& a, const HostGrant& b) { return a.host >= b.host; }) ==
      placement.grants.end();
  if (distinct_in_order) {
    // The usual case (one primary, placed in host order): the grants are the allocation's.
    allocation.hosts = std::move(placement.grants);
    placement.grants.clear();
  }
  std::sort(placement.grants.begin(), placement.grants.end(),
            [](const HostGrant& a, const HostGrant& b) { return a.host < b.host; });
  allocation.hosts.reserve(allocation.hosts.size() + placement.grants.size());
  for (HostGrant& grant : placement.grants) {
    if (allocation.hosts.empty() || allocation.hosts.back().host != grant.host) {
      allocation.hosts.push_back(std::move(grant));
      continue;
    }
    HostGrant& merged = allocation.hosts.back();
    merged.slots += grant.slots;
    merged.whole_host = merged.whole_host || grant.whole_host;
    // Disjoint: each part picked from what the other left. Shared parts are refused in
    // compounds (Validate), so a merged grant is never part shared, part whole.
    SLUICE_CHECK((merged.gpus & grant.gpus) == 0 && grant.gpu_mem_mb == 0 &&
                 merged.gpu_mem_mb == 0);
    merged.gpus |= grant.gpus;
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

// Tries one alternative: every part, or none (R-RR-2). First the greedy pass: each part's
// preferred placement on the capacity the earlier parts left (this pass explains a
// failure). When a part then cannot be placed although a placement of all parts might
// exist, a depth-first search tries the parts' other placements in order of preference
// (seeds/001: the compound is all parts or none; the greedy pass alone misses placements
// where an earlier part takes the only hosts a later part can use). The search is bounded
// by kSearchBudget host tries, so a very large compound may still miss a placement.
constexpr int64_t kSearchBudget = 20000;

PrimaryTask PartTask(const Job& job, const ClusterState& state, const resreq::Primary& part,
                     const Capacity& capacity, bool feasibility, bool reference,
                     bool explain_failure = true) {
  return PrimaryTask{.state = state,
                     .queue = state.topology().queues()[job.queue],
                     .primary = part,
                     .min_tasks = part.count > 0 ? part.count : job.spec.min_tasks,
                     .max_tasks = part.count > 0 ? part.count : job.spec.max_tasks,
                     .exclusive = job.spec.exclusive,
                     .optimistic_select = feasibility,
                     .reference = reference,
                     .explain_failure = explain_failure,
                     .reservation = capacity.TermsOf(job)};
}

bool SearchParts(const Job& job, const ClusterState& state, const resreq::Compound& compound,
                 size_t part, bool feasibility, bool reference, Capacity& capacity,
                 Placement& placement, int64_t& budget) {
  if (part == compound.parts.size()) return true;
  return EnumeratePlacements(PartTask(job, state, compound.parts[part], capacity, feasibility, reference),
                             capacity, placement, budget, [&]() {
                               return SearchParts(job, state, compound, part + 1, feasibility,
                                                  reference, capacity, placement, budget);
                             });
}

// `feasibility`: judged for static feasibility (see PrimaryTask::optimistic_select).
// `explain_failure`: false when the caller never reads `reasons` (PrimaryTask).
bool AllocateCompound(const Job& job, const ClusterState& state, const resreq::Compound& compound,
                      bool feasibility, bool reference, Capacity& capacity, Placement& placement,
                      PendingReasons& reasons, bool explain_failure = true) {
  const size_t mark = capacity.Mark();
  bool greedy = true;
  for (const resreq::Primary& part : compound.parts) {
    if (!AllocatePrimary(PartTask(job, state, part, capacity, feasibility, reference, explain_failure),
                         capacity, placement, reasons)) {
      greedy = false;
      break;
    }
  }
  // A single primary's greedy placement is exact (plan_iterator.h): nothing to search.
  if (greedy || compound.parts.size() == 1) return greedy;
  capacity.Rollback(mark);
  placement = {};
  int64_t budget = kSearchBudget;
  if (SearchParts(job, state, compound, 0, feasibility, reference, capacity, placement, budget)) {
    reasons = {};
    return true;
  }
  capacity.Rollback(mark);
  placement = {};
  return false;
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
      if (!detail.devices.empty()) {  // GPUs with constraints (R-GPU-4)
        return "asks " + std::to_string(detail.needed) + " " + detail.resource + " (" +
               detail.devices + ")" + (detail.one_host ? " on one host" : "") +
               "; the eligible hosts have " + (detail.one_host ? "at most " : "") +
               std::to_string(detail.available) + (detail.one_host ? " on one host" : "");
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
          "select[" +
          resreq::NormalizeExpr(alternative.parts[0].select, state.requests().expr_pool()) + "]";
      if (reasons.main == ReasonCode::kNoMatch) {
        clauses = "no host the queue may use satisfies " + select;
      } else {
        clauses += " (hosts matching " + select + ")";
      }
    }
    if (per_alternative.size() > 1)
      clauses = "alternative " + std::to_string(a + 1) + ": " + clauses;
    if (!message.empty()) message += "; ";
    message += clauses;
  }
  return message;
}

}  // namespace

AllocOutcome ResreqAllocator::Nominate(const Job& job, const ClusterState& state,
                                       Capacity& capacity) const {
  return NominateFor(job, state, capacity, /*explain_failure=*/true);
}

AllocOutcome ResreqAllocator::NominateUnexplained(const Job& job, const ClusterState& state,
                                                  Capacity& capacity) const {
  return NominateFor(job, state, capacity, /*explain_failure=*/false);
}

AllocOutcome ResreqAllocator::NominateFor(const Job& job, const ClusterState& state,
                                          Capacity& capacity, bool explain_failure) const {
  AllocOutcome outcome;
  const size_t start = capacity.Mark();
  for (const resreq::Compound& alternative : job.request->alternatives) {
    Placement placement;
    if (AllocateCompound(job, state, alternative, /*feasibility=*/false, reference_, capacity,
                         placement, outcome.reasons, explain_failure)) {
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
    const bool ok = AllocateCompound(job, state, alternative, /*feasibility=*/true, reference_,
                                     all_configured, placement, reasons);
    all_configured.Rollback(start);
    if (ok) return {};
    per_alternative.push_back(std::move(reasons));
  }
  return Feasibility{.ok = false,
                     .why = DescribeImpossible(job, state, per_alternative),
                     .reasons = per_alternative.front()};
}

}  // namespace sluice::core
