// Property tests of the resource-request allocator (R-AL-1 … R-AL-7, R-RR-1 … R-RR-3, R-RR-6)
// on seeded random small clusters and requests written as text (STYLE.md "Property tests").
//
// Each instance: 1..6 hosts of 1..4 slots with a `mem` resource, a `type` attribute from
// {a, b}, a `fast` tag and a random state; a shared `lic`; some jobs already running and some
// already nominated and debited this cycle; then one job whose request has 1..2 alternatives
// of 1..2 parts, with select/order/rusage/span/same, an exclusive flag and a task range.
// Properties:
//  1. a successful allocation is a placement of the first alternative that fits on its own,
//     part by part (select, demand within free, task count, span, same, exclusive, shared),
//     and nothing is overbooked after Debit;
//  2. when Nominate says no, a brute-force search of the same plan space (every balanced and
//     the packed partition, every task count, every assignment of buckets to distinct hosts,
//     parts in order on what the earlier parts left) finds no placement either, and the
//     reasons are not empty and every shortage they name is real (needed > available);
//  3. Nominate returns the Capacity unchanged;
//  4. the same input gives the same outcome, whatever history led to the same free capacity;
//  5. what Nominate places now, CheckFeasible does not call impossible.
// The brute force and the checker of (1) model free capacity independently: the brute force
// in its own arrays and view, the checker on Capacity copies with CapacityHostView.
// Every failure prints the seed and the instance (SCOPED_TRACE).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/alloc/capacity.h"
#include "core/alloc/host_view.h"
#include "core/alloc/resreq_allocator.h"
#include "core/model/cluster_state.h"
#include "core/resreq/eval.h"

namespace sluice::core {
namespace {

constexpr uint64_t kSeeds = 10000;
constexpr JobId kJob = 100;

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  int32_t Uniform(int32_t lo, int32_t hi) {
    return lo + static_cast<int32_t>(gen_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int32_t percent) { return Uniform(0, 99) < percent; }
  std::string Pick(const std::vector<std::string>& options) {
    return options[static_cast<size_t>(Uniform(0, static_cast<int32_t>(options.size()) - 1))];
  }

 private:
  std::mt19937_64 gen_;
};

// --- Random instances -------------------------------------------------------------------

ClusterConfig RandomCluster(Rng& rng) {
  ClusterConfig config;
  const int32_t hosts = rng.Uniform(1, 6);
  for (int32_t h = 0; h < hosts; ++h) {
    HostSpec host{.name = "h" + std::to_string(h + 1), .slots = rng.Uniform(1, 4)};
    // Host 1 always defines mem, so `mem` is a known resource.
    if (h == 0 || rng.Chance(80)) host.resources["mem"] = 100 * rng.Uniform(0, 8);
    if (rng.Chance(85)) host.attributes["type"] = rng.Chance(50) ? "a" : "b";
    if (rng.Chance(50)) host.tags.push_back("fast");
    const int32_t state = rng.Uniform(0, 99);
    host.state = state < 80   ? HostState::kOk
                 : state < 87 ? HostState::kClosed
                 : state < 94 ? HostState::kUnavail
                              : HostState::kDraining;
    config.hosts.push_back(std::move(host));
  }
  config.shared_resources["lic"] = rng.Uniform(0, 4);
  config.queues.push_back(QueueSpec{.name = "normal"});
  return config;
}

std::string RandomPrimary(Rng& rng) {
  std::vector<std::string> sections;
  if (rng.Chance(60)) {
    sections.push_back(
        "select[" +
        rng.Pick({"type==a", "type==b", "fast", "!fast", "mem>=200", "type==a || fast",
                  "defined(type) && mem>=100", "slots>=2", "slots<3", "mem<300", "slots==1"}) +
        "]");
  }
  if (rng.Chance(30)) sections.push_back("order[" + rng.Pick({"-slots", "mem", "-mem"}) + "]");
  if (rng.Chance(50)) {
    sections.push_back(
        "rusage[" + rng.Pick({"mem=100", "mem=50", "mem=200", "lic=1", "lic=2", "lic=1:mem=100"}) +
        "]");
  }
  const int32_t span = rng.Uniform(0, 9);
  if (span < 2) sections.push_back("span[hosts=1]");
  if (span >= 8) sections.push_back("span[ptile=" + std::to_string(rng.Uniform(1, 3)) + "]");
  if (rng.Chance(25)) sections.push_back("same[type]");
  std::string text;
  for (const std::string& s : sections) text += (text.empty() ? "" : " ") + s;
  return text;
}

// How often an alternative is a compound, and a compound has two parts.
struct Mix {
  std::string_view name;
  int32_t compound_percent = 40;
  int32_t two_parts_percent = 50;
};
constexpr Mix kDefaultMix{.name = "default mix"};
// Compounds whose first part can take what the second needs, where searches go wrong.
constexpr Mix kCompoundMix{.name = "compound mix", .compound_percent = 90, .two_parts_percent = 90};

// A plain primary, or a compound of 1..2 parts.
std::string RandomAlternative(Rng& rng, const Mix& mix) {
  if (!rng.Chance(mix.compound_percent)) return RandomPrimary(rng);
  std::string text;
  const int32_t parts = rng.Chance(mix.two_parts_percent) ? 2 : 1;
  for (int32_t p = 0; p < parts; ++p) {
    if (p > 0) text += " + ";
    text += std::to_string(rng.Uniform(1, 4)) + "*{" + RandomPrimary(rng) + "}";
  }
  return text;
}

struct Instance {
  uint64_t seed = 0;
  const Mix* mix = nullptr;
  ClusterState state;
  Capacity capacity;                      // free capacity just before kJob is nominated
  std::vector<std::string> alternatives;  // each alternative's text alone
  std::string text;                       // the whole request
  int32_t min_tasks = 1;
  int32_t max_tasks = 1;
  bool exclusive = false;
  std::vector<Allocation> debits;  // what the jobs nominated earlier in the cycle took
  std::string setup_error;         // non-empty when the instance could not be built
};

Status SubmitJob(ClusterState& state, JobId id, const std::string& text, int32_t min_tasks,
                 int32_t max_tasks, bool exclusive) {
  return state.Submit(JobSpec{.id = id,
                              .user = "u1",
                              .resreq = text,
                              .min_tasks = min_tasks,
                              .max_tasks = max_tasks,
                              .exclusive = exclusive});
}

AllocOutcome NominateJob(const ClusterState& state, JobId id, Capacity& capacity) {
  return ResreqAllocator().Nominate(*state.FindJob(id), state, capacity);
}

Instance MakeInstance(uint64_t seed, const Mix& mix) {
  Rng rng(seed);
  ClusterState state = ClusterState::Create(RandomCluster(rng)).value();
  std::string error;
  // Jobs already running: each placed by the allocator on what the earlier ones left.
  const int32_t running = rng.Uniform(0, 3);
  for (JobId id = 1; id <= running; ++id) {
    const std::string text = RandomPrimary(rng);
    const int32_t tasks = rng.Uniform(1, 3);
    Status status = SubmitJob(state, id, text, tasks, tasks, rng.Chance(15));
    if (!status.ok()) error += status.ToString() + "\n";
    if (!status.ok()) continue;
    Capacity free(state);
    AllocOutcome outcome = NominateJob(state, id, free);
    if (outcome.ok) state.Start(id, outcome.allocation, 0);
  }
  state.MarkClassified();
  // Jobs nominated and debited earlier in this cycle (some fail and leave nothing).
  Capacity capacity(state);
  std::vector<Allocation> debits;
  const int32_t debited = rng.Uniform(0, 4);
  for (JobId id = 11; id <= 10 + debited; ++id) {
    const std::string text = RandomPrimary(rng);
    const int32_t tasks = rng.Uniform(1, 3);
    Status status = SubmitJob(state, id, text, tasks, tasks, rng.Chance(15));
    if (!status.ok()) error += status.ToString() + "\n";
    if (!status.ok()) continue;
    AllocOutcome outcome = NominateJob(state, id, capacity);
    if (outcome.ok) capacity.Debit(outcome.allocation);
    if (outcome.ok) debits.push_back(outcome.allocation);
  }
  Instance instance{.seed = seed,
                    .mix = &mix,
                    .state = std::move(state),
                    .capacity = capacity,
                    .debits = std::move(debits)};
  const int32_t alternatives = rng.Uniform(1, 2);
  for (int32_t a = 0; a < alternatives; ++a) {
    instance.alternatives.push_back(RandomAlternative(rng, mix));
  }
  instance.text = alternatives == 1
                      ? instance.alternatives[0]
                      : "{" + instance.alternatives[0] + "} || {" + instance.alternatives[1] + "}";
  instance.min_tasks = rng.Uniform(1, 6);
  instance.max_tasks = rng.Chance(50) ? instance.min_tasks : instance.min_tasks + rng.Uniform(1, 3);
  instance.exclusive = rng.Chance(20);
  Status status = SubmitJob(instance.state, kJob, instance.text, instance.min_tasks,
                            instance.max_tasks, instance.exclusive);
  if (!status.ok()) error += status.ToString() + "\n";
  instance.setup_error = error;
  return instance;
}

std::string Describe(const Instance& instance) {
  const ClusterState& state = instance.state;
  const Capacity& capacity = instance.capacity;
  const auto mem = state.topology().FindHostResource("mem");
  std::string out = "seed " + std::to_string(instance.seed) + " (" +
                    std::string(instance.mix->name) + ")\nrequest '" + instance.text + "' tasks " +
                    std::to_string(instance.min_tasks) + ".." + std::to_string(instance.max_tasks) +
                    (instance.exclusive ? " exclusive" : "") + "\n";
  for (const Host& host : state.topology().hosts()) {
    out += host.spec.name + ": " + std::string(ToString(host.spec.state)) + " slots " +
           std::to_string(capacity.FreeSlots(host.index)) + "/" + std::to_string(host.spec.slots);
    if (host.spec.resources.contains("mem")) {
      out += " mem " + std::to_string(capacity.FreeResource(host.index, *mem)) + "/" +
             std::to_string(host.spec.resources.at("mem"));
    }
    for (const auto& [name, value] : host.spec.attributes) out += " " + name + "=" + value;
    for (const std::string& tag : host.spec.tags) out += " #" + tag;
    out += capacity.Idle(host.index) ? " idle\n" : "\n";
  }
  if (auto lic = state.topology().FindSharedResource("lic")) {
    out += "lic " + std::to_string(capacity.FreeShared(*lic)) + "/" +
           std::to_string(state.topology().SharedTotal(*lic)) + "\n";
  }
  return out;
}

std::string Describe(const ClusterState& state, const Allocation& allocation) {
  std::string out;
  for (const HostGrant& grant : allocation.hosts) {
    out += state.topology().hosts()[grant.host].spec.name + ":" + std::to_string(grant.slots);
    for (const ResourceAmount& r : grant.resources) {
      out += " " + state.topology().host_resources()[r.id] + "=" + std::to_string(r.amount);
    }
    out += grant.whole_host ? " whole; " : "; ";
  }
  for (const ResourceAmount& r : allocation.shared) {
    out += state.topology().shared_resources()[r.id] + "=" + std::to_string(r.amount) + " ";
  }
  return out;
}

std::string Describe(const PendingReasons& reasons) {
  std::string out = std::string(ToString(reasons.main)) + ":";
  for (const ReasonDetail& d : reasons.details) {
    out += " " + std::string(ToString(d.code)) + "{" + d.resource + " " + std::to_string(d.needed) +
           "/" + std::to_string(d.available) + " hosts " + std::to_string(d.hosts) + "}";
  }
  return out;
}

std::string Snapshot(const ClusterState& state, const Capacity& capacity) {
  std::string out;
  for (const Host& host : state.topology().hosts()) {
    out += std::to_string(capacity.FreeSlots(host.index));
    for (ResourceId r = 0; r < state.topology().host_resources().size(); ++r) {
      out += "," + std::to_string(capacity.FreeResource(host.index, r));
    }
    out += capacity.Idle(host.index) ? " idle; " : "; ";
  }
  for (ResourceId r = 0; r < state.topology().shared_resources().size(); ++r) {
    out += std::to_string(capacity.FreeShared(r)) + " ";
  }
  return out + "total " + std::to_string(capacity.TotalFree());
}

// --- One part of an alternative, as both searches see it ---------------------------------

struct PartSpec {
  resreq::ExprId select = resreq::kNoExpr;
  int64_t mem = 0;  // per task
  int64_t lic = 0;  // per part
  resreq::Span span;
  std::string same;
  int32_t min_tasks = 1;
  int32_t max_tasks = 1;
};

std::vector<PartSpec> PartsOf(const resreq::Compound& alternative, const Instance& instance) {
  std::vector<PartSpec> parts;
  for (const resreq::Primary& primary : alternative.parts) {
    PartSpec part{.select = primary.select, .span = primary.span, .same = primary.same};
    for (const resreq::Rusage& r : primary.rusage) {
      (r.resource == "mem" ? part.mem : part.lic) = static_cast<int64_t>(r.amount);
    }
    part.min_tasks = primary.count > 0 ? primary.count : instance.min_tasks;
    part.max_tasks = primary.count > 0 ? primary.count : instance.max_tasks;
    parts.push_back(std::move(part));
  }
  return parts;
}

// The bucket sizes of a ptile plan (K, K, ..., remainder).
std::vector<int32_t> PtilePlan(int32_t tasks, int32_t ptile) {
  std::vector<int32_t> plan(static_cast<size_t>(tasks / ptile), ptile);
  if (tasks % ptile != 0) plan.push_back(tasks % ptile);
  return plan;
}

// The packed plan: the largest fits first; empty when they cannot hold the tasks.
std::vector<int32_t> PackedPlan(int32_t tasks, std::vector<int32_t> fits) {
  std::sort(fits.rbegin(), fits.rend());
  std::vector<int32_t> plan;
  for (int32_t fit : fits) {
    if (tasks == 0) break;
    plan.push_back(std::min(fit, tasks));
    tasks -= plan.back();
  }
  if (tasks > 0) plan.clear();
  return plan;
}

// --- Brute force, on its own model of free capacity ------------------------------------

struct FreeModel {
  std::vector<int32_t> slots;
  std::vector<int64_t> mem;
  std::vector<uint8_t> idle;
  std::vector<uint8_t> works;
  int64_t lic = 0;
};

FreeModel ModelOf(const Instance& instance) {
  FreeModel model;
  const auto mem = instance.state.topology().FindHostResource("mem");
  for (const Host& host : instance.state.topology().hosts()) {
    model.slots.push_back(instance.capacity.FreeSlots(host.index));
    model.mem.push_back(instance.capacity.FreeResource(host.index, *mem));
    model.idle.push_back(instance.capacity.Idle(host.index));
    model.works.push_back(instance.capacity.AcceptsWork(host.index));
  }
  model.lic = instance.capacity.FreeShared(*instance.state.topology().FindSharedResource("lic"));
  return model;
}

class ModelView final : public resreq::HostView {
 public:
  ModelView(const ClusterState& state, const FreeModel& model) : state_(state), model_(model) {}
  void Bind(HostIndex host) { host_ = host; }
  std::optional<std::string_view> Attribute(std::string_view name) const override {
    const auto& attributes = spec().attributes;
    auto it = attributes.find(std::string(name));
    if (it == attributes.end()) return std::nullopt;
    return std::string_view(it->second);
  }
  bool HasTag(std::string_view name) const override {
    return std::find(spec().tags.begin(), spec().tags.end(), name) != spec().tags.end();
  }
  std::optional<double> Free(std::string_view name) const override {
    if (name == "slots") return model_.slots[host_];
    if (name == "mem" && spec().resources.contains("mem")) return model_.mem[host_];
    return std::nullopt;
  }
  std::optional<double> Total(std::string_view name) const override {
    if (name == "slots") return spec().slots;
    auto it = spec().resources.find(std::string(name));
    if (it == spec().resources.end()) return std::nullopt;
    return static_cast<double>(it->second);
  }

 private:
  const HostSpec& spec() const { return state_.topology().hosts()[host_].spec; }
  const ClusterState& state_;
  const FreeModel& model_;
  HostIndex host_ = 0;
};

struct Candidate {
  HostIndex host = 0;
  int32_t fit = 0;
};

// The hosts a part may use now, grouped by same[] value (one group without same[]).
std::vector<std::vector<Candidate>> CandidateGroups(const Instance& instance, const PartSpec& part,
                                                    const FreeModel& model) {
  ModelView view(instance.state, model);
  std::map<std::string, std::vector<Candidate>> groups;
  for (const Host& host : instance.state.topology().hosts()) {
    const HostIndex h = host.index;
    view.Bind(h);
    if (!model.works[h] || (instance.exclusive && !model.idle[h])) continue;
    if (!resreq::EvalSelect(part.select, instance.state.requests().expr_pool(), view)) continue;
    int64_t fit = model.slots[h];
    if (part.mem > 0) fit = std::min(fit, model.mem[h] / part.mem);
    if (fit <= 0) continue;
    std::string key;
    if (!part.same.empty()) {
      auto it = host.spec.attributes.find(part.same);
      if (it == host.spec.attributes.end()) continue;
      key = it->second;
    }
    groups[key].push_back(Candidate{h, static_cast<int32_t>(fit)});
  }
  std::vector<std::vector<Candidate>> out;
  for (auto& [key, hosts] : groups) out.push_back(std::move(hosts));
  return out;
}

// Every plan of the plan space for `tasks` on a group (R-AL-2, R-RR-1).
std::vector<std::vector<int32_t>> PlanSpace(const PartSpec& part, int32_t tasks,
                                            const std::vector<Candidate>& group) {
  if (part.span.kind == resreq::SpanKind::kOneHost) return {{tasks}};
  if (part.span.kind == resreq::SpanKind::kPtile) return {PtilePlan(tasks, part.span.ptile)};
  std::vector<std::vector<int32_t>> plans;
  for (int32_t k = 1; k <= tasks && k <= static_cast<int32_t>(group.size()); ++k) {
    std::vector<int32_t> plan(static_cast<size_t>(k), tasks / k);
    for (int32_t i = 0; i < tasks % k; ++i) plan[static_cast<size_t>(i)] += 1;
    plans.push_back(std::move(plan));
  }
  std::vector<int32_t> fits;
  for (const Candidate& c : group) fits.push_back(c.fit);
  std::vector<int32_t> packed = PackedPlan(tasks, fits);
  if (!packed.empty()) plans.push_back(std::move(packed));
  return plans;
}

// One part's tasks per host index.
using PartPlacement = std::vector<int32_t>;

class BruteForce {
 public:
  BruteForce(const Instance& instance, std::vector<PartSpec> parts)
      : instance_(instance), parts_(std::move(parts)) {}

  // A placement of every part, in order, or nullopt.
  std::optional<std::vector<PartPlacement>> Search() {
    witness_.clear();
    if (!SearchPart(0, ModelOf(instance_))) return std::nullopt;
    return witness_;
  }

 private:
  bool SearchPart(size_t index, const FreeModel& model) {
    if (index == parts_.size()) return true;
    const PartSpec& part = parts_[index];
    if (part.lic > model.lic) return false;
    std::set<PartPlacement> tried;
    for (const std::vector<Candidate>& group : CandidateGroups(instance_, part, model)) {
      for (int32_t tasks = part.min_tasks; tasks <= part.max_tasks; ++tasks) {
        for (const std::vector<int32_t>& plan : PlanSpace(part, tasks, group)) {
          PartPlacement placement(model.slots.size(), 0);
          if (Assign(index, model, plan, 0, group, placement, tried)) return true;
        }
      }
    }
    return false;
  }

  // Buckets from `bucket` on, each to a distinct host of the group with room for it.
  bool Assign(size_t index, const FreeModel& model, const std::vector<int32_t>& plan, size_t bucket,
              const std::vector<Candidate>& group, PartPlacement& placement,
              std::set<PartPlacement>& tried) {
    if (bucket == plan.size()) {
      if (!tried.insert(placement).second) return false;
      const PartSpec& part = parts_[index];
      FreeModel next = model;
      for (HostIndex h = 0; h < placement.size(); ++h) {
        if (placement[h] == 0) continue;
        next.slots[h] -= instance_.exclusive ? next.slots[h] : placement[h];
        next.mem[h] -= placement[h] * part.mem;
        next.idle[h] = 0;
      }
      next.lic -= part.lic;
      witness_.push_back(placement);
      if (SearchPart(index + 1, next)) return true;
      witness_.pop_back();
      return false;
    }
    for (const Candidate& c : group) {
      if (placement[c.host] != 0 || c.fit < plan[bucket]) continue;
      placement[c.host] = plan[bucket];
      if (Assign(index, model, plan, bucket + 1, group, placement, tried)) return true;
      placement[c.host] = 0;
    }
    return false;
  }

  const Instance& instance_;
  std::vector<PartSpec> parts_;
  std::vector<PartPlacement> witness_;
};

std::string Describe(const ClusterState& state, const std::vector<PartPlacement>& parts) {
  std::string out;
  for (size_t p = 0; p < parts.size(); ++p) {
    out += "part " + std::to_string(p + 1) + ":";
    for (HostIndex h = 0; h < parts[p].size(); ++h) {
      if (parts[p][h] > 0)
        out += " " + state.topology().hosts()[h].spec.name + ":" + std::to_string(parts[p][h]);
    }
    out += "; ";
  }
  return out;
}

// --- Checker of property 1, on Capacity copies ------------------------------------------

// Why `tasks` (per host) is not a valid placement of `part` on `capacity`, or "" when it is;
// when valid, claims it in `capacity`.
std::string CheckPart(const Instance& instance, const PartSpec& part, const PartPlacement& tasks,
                      Capacity& capacity) {
  const ClusterState& state = instance.state;
  const ResourceId mem = *state.topology().FindHostResource("mem");
  const ResourceId lic = *state.topology().FindSharedResource("lic");
  int32_t total = 0;
  std::vector<int32_t> counts;
  std::optional<std::string> value;
  CapacityHostView view(state, capacity);
  for (HostIndex h = 0; h < tasks.size(); ++h) {
    if (tasks[h] == 0) continue;
    const std::string& name = state.topology().hosts()[h].spec.name;
    view.Bind(h);
    if (!capacity.AcceptsWork(h) || state.topology().hosts()[h].spec.state != HostState::kOk) {
      return name + " does not accept work";
    }
    if (!resreq::EvalSelect(part.select, state.requests().expr_pool(), view))
      return name + " fails select";
    if (instance.exclusive && !capacity.Idle(h)) return name + " is not idle (exclusive)";
    if (tasks[h] > capacity.FreeSlots(h)) return name + " has too few free slots";
    if (tasks[h] * part.mem > capacity.FreeResource(h, mem)) return name + " has too little mem";
    if (!part.same.empty()) {
      const auto& attributes = state.topology().hosts()[h].spec.attributes;
      auto it = attributes.find(part.same);
      if (it == attributes.end()) return name + " has no " + part.same + " (same)";
      if (value && *value != it->second) return "hosts differ in " + part.same + " (same)";
      value = it->second;
    }
    total += tasks[h];
    counts.push_back(tasks[h]);
  }
  if (total < part.min_tasks || total > part.max_tasks) {
    return std::to_string(total) + " tasks, not in " + std::to_string(part.min_tasks) + ".." +
           std::to_string(part.max_tasks);
  }
  if (part.lic > capacity.FreeShared(lic)) return "too little lic";
  std::sort(counts.rbegin(), counts.rend());
  switch (part.span.kind) {
    case resreq::SpanKind::kOneHost:
      if (counts.size() != 1) return "span[hosts=1] on " + std::to_string(counts.size()) + " hosts";
      break;
    case resreq::SpanKind::kPtile:
      if (counts != PtilePlan(total, part.span.ptile)) return "not ptile";
      break;
    case resreq::SpanKind::kNone: {
      // A balanced plan, or the packed plan of the hosts the part could use (its same group).
      if (counts.front() - counts.back() <= 1) break;
      std::vector<int32_t> fits;
      for (const Host& host : state.topology().hosts()) {
        const HostIndex h = host.index;
        view.Bind(h);
        if (!capacity.AcceptsWork(h) || (instance.exclusive && !capacity.Idle(h))) continue;
        if (!resreq::EvalSelect(part.select, state.requests().expr_pool(), view)) continue;
        if (value) {
          auto it = host.spec.attributes.find(part.same);
          if (it == host.spec.attributes.end() || it->second != *value) continue;
        }
        int64_t fit = capacity.FreeSlots(h);
        if (part.mem > 0) fit = std::min(fit, capacity.FreeResource(h, mem) / part.mem);
        if (fit > 0) fits.push_back(static_cast<int32_t>(fit));
      }
      if (counts != PackedPlan(total, fits)) return "neither a balanced nor the packed plan";
      break;
    }
  }
  for (HostIndex h = 0; h < tasks.size(); ++h) {
    if (tasks[h] == 0) continue;
    HostGrant grant{.host = h, .slots = tasks[h], .whole_host = instance.exclusive};
    if (part.mem > 0) grant.resources.push_back(ResourceAmount{mem, tasks[h] * part.mem});
    capacity.ClaimHost(grant);
  }
  if (part.lic > 0) capacity.ClaimShared(ResourceAmount{lic, part.lic});
  return "";
}

// Why `allocation` is not a placement of `parts` (in order) on the instance's capacity, or ""
// when some split of every grant's tasks among the parts makes it one, with the grants'
// resources and the shared amounts exactly the parts' demand.
std::string CheckPlacement(const Instance& instance, const std::vector<PartSpec>& parts,
                           const Allocation& allocation) {
  const ClusterState& state = instance.state;
  const ResourceId mem = *state.topology().FindHostResource("mem");
  const ResourceId lic = *state.topology().FindSharedResource("lic");
  for (size_t i = 0; i < allocation.hosts.size(); ++i) {
    const HostGrant& grant = allocation.hosts[i];
    if (grant.slots <= 0) return "a grant without tasks";
    if (i > 0 && allocation.hosts[i - 1].host >= grant.host) return "grants not in host order";
    if (grant.whole_host != instance.exclusive) return "whole_host differs from exclusive";
  }
  int64_t lic_wanted = 0;
  for (const PartSpec& part : parts) lic_wanted += part.lic;
  const std::vector<ResourceAmount> shared_wanted =
      lic_wanted > 0 ? std::vector<ResourceAmount>{{lic, lic_wanted}}
                     : std::vector<ResourceAmount>{};
  if (allocation.shared != shared_wanted) return "shared amounts are not the sum of the parts'";
  // Splits: for each grant, how many of its tasks go to part 1 (the rest to part 2).
  std::vector<int32_t> first(allocation.hosts.size(), 0);
  if (parts.size() == 1) {
    for (size_t i = 0; i < first.size(); ++i) first[i] = allocation.hosts[i].slots;
  }
  std::string why = "no split of the grants among the parts";  // else: the last split's flaw
  while (true) {
    std::vector<PartPlacement> placement(parts.size(),
                                         PartPlacement(state.topology().hosts().size(), 0));
    bool resources_match = true;
    for (size_t i = 0; i < first.size(); ++i) {
      const HostGrant& grant = allocation.hosts[i];
      placement[0][grant.host] = first[i];
      if (parts.size() > 1) placement[1][grant.host] = grant.slots - first[i];
      int64_t mem_wanted = 0;
      for (size_t p = 0; p < parts.size(); ++p)
        mem_wanted += placement[p][grant.host] * parts[p].mem;
      const std::vector<ResourceAmount> wanted =
          mem_wanted > 0 ? std::vector<ResourceAmount>{{mem, mem_wanted}}
                         : std::vector<ResourceAmount>{};
      resources_match = resources_match && grant.resources == wanted;
    }
    if (resources_match) {
      Capacity capacity = instance.capacity;
      std::string part_why;
      for (size_t p = 0; p < parts.size() && part_why.empty(); ++p) {
        part_why = CheckPart(instance, parts[p], placement[p], capacity);
        if (!part_why.empty()) part_why = "part " + std::to_string(p + 1) + ": " + part_why;
      }
      if (part_why.empty()) return "";
      why = part_why;
    } else if (parts.size() == 1) {
      why = "grant resources are not tasks x rusage";
    }
    if (parts.size() == 1) return why;
    // Next split (odometer).
    size_t i = 0;
    while (i < first.size() && first[i] == allocation.hosts[i].slots) first[i++] = 0;
    if (i == first.size()) return why;
    ++first[i];
  }
}

// Free slots, resources and shared amounts never below zero.
std::string Overbooked(const ClusterState& state, const Capacity& capacity) {
  for (const Host& host : state.topology().hosts()) {
    if (capacity.FreeSlots(host.index) < 0) return host.spec.name + " slots";
    for (ResourceId r = 0; r < state.topology().host_resources().size(); ++r) {
      if (capacity.FreeResource(host.index, r) < 0)
        return host.spec.name + " " + state.topology().host_resources()[r];
    }
  }
  for (ResourceId r = 0; r < state.topology().shared_resources().size(); ++r) {
    if (capacity.FreeShared(r) < 0) return state.topology().shared_resources()[r];
  }
  return "";
}

// Whether every grant fits the free capacity (so Debit may be called).
bool Fits(const Capacity& capacity, const Allocation& allocation) {
  for (const HostGrant& grant : allocation.hosts) {
    if (grant.slots > capacity.FreeSlots(grant.host) || !capacity.AcceptsWork(grant.host))
      return false;
    for (const ResourceAmount& r : grant.resources) {
      if (r.amount > capacity.FreeResource(grant.host, r.id)) return false;
    }
  }
  for (const ResourceAmount& r : allocation.shared) {
    if (r.amount > capacity.FreeShared(r.id)) return false;
  }
  return true;
}

// --- The properties -----------------------------------------------------------------------

// Runs `check` on every seed's instance of a mix, up to the first seed that fails.
template <typename Check>
void ForEachInstance(const Check& check, const Mix& mix, uint64_t seeds = kSeeds) {
  for (uint64_t seed = 1; seed <= seeds && !::testing::Test::HasFailure(); ++seed) {
    Instance instance = MakeInstance(seed, mix);
    SCOPED_TRACE(Describe(instance));
    ASSERT_EQ(instance.setup_error, "");
    check(instance);
  }
}

// The same, for both mixes.
template <typename Check>
void ForEachInstance(const Check& check) {
  ForEachInstance(check, kDefaultMix);
  ForEachInstance(check, kCompoundMix);
}

TEST(AllocPropertyTest, EveryAllocationIsAPlacementOfTheFirstAlternativeThatFits) {
  int64_t allocated = 0;
  ForEachInstance([&](Instance& instance) {
    Capacity capacity = instance.capacity;
    AllocOutcome outcome = NominateJob(instance.state, kJob, capacity);
    // The alternatives alone, in order: the first that fits is the one the job gets.
    std::optional<size_t> chosen;
    AllocOutcome chosen_outcome;
    for (size_t a = 0; a < instance.alternatives.size() && !chosen; ++a) {
      const JobId solo = 200 + static_cast<JobId>(a);
      ASSERT_TRUE(SubmitJob(instance.state, solo, instance.alternatives[a], instance.min_tasks,
                            instance.max_tasks, instance.exclusive)
                      .ok());
      Capacity alone = instance.capacity;
      AllocOutcome solo_outcome = NominateJob(instance.state, solo, alone);
      if (solo_outcome.ok) {
        chosen = a;
        chosen_outcome = std::move(solo_outcome);
      }
    }
    ASSERT_EQ(outcome.ok, chosen.has_value()) << Describe(outcome.reasons);
    if (!outcome.ok) return;
    ++allocated;
    EXPECT_EQ(outcome.allocation, chosen_outcome.allocation)
        << "job: " << Describe(instance.state, outcome.allocation)
        << "\nalternative alone: " << Describe(instance.state, chosen_outcome.allocation);
    const resreq::Compound& alternative =
        instance.state.FindJob(kJob)->request->alternatives[*chosen];
    EXPECT_EQ(CheckPlacement(instance, PartsOf(alternative, instance), outcome.allocation), "")
        << "alternative " << *chosen + 1 << ", allocation "
        << Describe(instance.state, outcome.allocation);
    // R-RR-6: no larger task count of a single-part alternative has a placement.
    std::vector<PartSpec> parts = PartsOf(alternative, instance);
    if (parts.size() == 1 && outcome.allocation.TotalSlots() < parts[0].max_tasks) {
      parts[0].min_tasks = outcome.allocation.TotalSlots() + 1;
      if (auto found = BruteForce(instance, parts).Search()) {
        ADD_FAILURE() << "got " << outcome.allocation.TotalSlots()
                      << " tasks, but more fit: " << Describe(instance.state, *found);
      }
    }
    ASSERT_TRUE(Fits(capacity, outcome.allocation)) << Describe(instance.state, outcome.allocation);
    capacity.Debit(outcome.allocation);
    EXPECT_EQ(Overbooked(instance.state, capacity), "");
  });
  if (!::testing::Test::HasFailure()) {
    EXPECT_GT(allocated, static_cast<int64_t>(2 * kSeeds / 5));  // the instances exercise success
  }
}

// Requests whose alternatives are single primaries or single-part compounds.
bool SinglePartAlternatives(const Instance& instance) {
  for (const resreq::Compound& alternative : instance.state.FindJob(kJob)->request->alternatives) {
    if (alternative.parts.size() > 1) return false;
  }
  return true;
}

void ExpectNoPlacementWhenRefused(bool compound, const Mix& mix, uint64_t seeds) {
  int64_t refused = 0;
  ForEachInstance(
      [&](Instance& instance) {
        if (SinglePartAlternatives(instance) == compound) return;
        Capacity capacity = instance.capacity;
        AllocOutcome outcome = NominateJob(instance.state, kJob, capacity);
        if (outcome.ok) return;
        ++refused;
        // R-PR-1: never silent, and a shortage it names is real.
        EXPECT_FALSE(outcome.reasons.details.empty());
        for (const ReasonDetail& d : outcome.reasons.details) {
          if (d.code == ReasonCode::kNoResource || d.code == ReasonCode::kSharedResource) {
            EXPECT_GT(d.needed, d.available) << Describe(outcome.reasons);
          }
        }
        const resreq::Request& request = *instance.state.FindJob(kJob)->request;
        for (size_t a = 0; a < request.alternatives.size(); ++a) {
          BruteForce search(instance, PartsOf(request.alternatives[a], instance));
          if (auto found = search.Search()) {
            ADD_FAILURE() << "Nominate said no (" << Describe(outcome.reasons)
                          << ") but alternative " << a + 1
                          << " fits: " << Describe(instance.state, *found);
            break;
          }
        }
      },
      mix, seeds);
  if (!::testing::Test::HasFailure()) {
    EXPECT_GT(refused, static_cast<int64_t>(seeds / 50));  // the instances exercise refusal
  }
}

TEST(AllocPropertyTest, WhenNominateSaysNoNoPlanOfAnyAlternativeFits) {
  ExpectNoPlacementWhenRefused(/*compound=*/false, kDefaultMix, kSeeds);
}

TEST(AllocPropertyTest, WhenNominateSaysNoNoPlanOfAnyCompoundAlternativeFits) {
  ExpectNoPlacementWhenRefused(/*compound=*/true, kCompoundMix, 3 * kSeeds);
}

// Static feasibility (R-ADM-1) never calls UNSCHEDULABLE what fits now.
TEST(AllocPropertyTest, WhatFitsNowIsFeasible) {
  ForEachInstance([&](Instance& instance) {
    Capacity capacity = instance.capacity;
    if (!NominateJob(instance.state, kJob, capacity).ok) return;
    Capacity all = Capacity::AllConfigured(instance.state);
    const Feasibility feasibility =
        ResreqAllocator().CheckFeasible(*instance.state.FindJob(kJob), instance.state, all);
    EXPECT_TRUE(feasibility.ok) << feasibility.why;
  });
}

TEST(AllocPropertyTest, NominateNeverChangesTheCapacity) {
  ForEachInstance([&](Instance& instance) {
    Capacity capacity = instance.capacity;
    const std::string before = Snapshot(instance.state, capacity);
    const size_t mark = capacity.Mark();
    (void)NominateJob(instance.state, kJob, capacity);
    EXPECT_EQ(Snapshot(instance.state, capacity), before);
    EXPECT_EQ(capacity.Mark(), mark);
  });
}

TEST(AllocPropertyTest, TheSameInputGivesTheSameOutcome) {
  ForEachInstance([&](Instance& instance) {
    Capacity capacity = instance.capacity;
    const AllocOutcome first = NominateJob(instance.state, kJob, capacity);
    const AllocOutcome again = NominateJob(instance.state, kJob, capacity);
    Instance rebuilt = MakeInstance(instance.seed, *instance.mix);
    const AllocOutcome fresh = NominateJob(rebuilt.state, kJob, rebuilt.capacity);
    for (const AllocOutcome* other : {&again, &fresh}) {
      EXPECT_EQ(other->ok, first.ok);
      EXPECT_EQ(other->allocation, first.allocation)
          << Describe(instance.state, other->allocation) << " vs "
          << Describe(instance.state, first.allocation);
      EXPECT_EQ(other->reasons, first.reasons)
          << Describe(other->reasons) << " vs " << Describe(first.reasons);
    }
  });
}

// The same free capacity reached by another history (no earlier nominations at all, or more
// of them that were not debited) gives the same outcome: nothing an earlier Nominate left in
// the Capacity, beyond what Debit took, changes a later decision.
TEST(AllocPropertyTest, TheOutcomeDependsOnlyOnWhatIsFree) {
  ForEachInstance([&](Instance& instance) {
    Capacity replayed(instance.state);
    for (const Allocation& allocation : instance.debits) replayed.Debit(allocation);
    ASSERT_EQ(Snapshot(instance.state, replayed), Snapshot(instance.state, instance.capacity));
    Capacity busy = instance.capacity;
    for (JobId id = 11; id <= 14; ++id) {
      if (instance.state.FindJob(id) != nullptr) (void)NominateJob(instance.state, id, busy);
    }
    const AllocOutcome want = NominateJob(instance.state, kJob, replayed);
    for (Capacity* capacity : {&instance.capacity, &busy}) {
      const AllocOutcome got = NominateJob(instance.state, kJob, *capacity);
      EXPECT_EQ(got.ok, want.ok);
      EXPECT_EQ(got.allocation, want.allocation)
          << Describe(instance.state, got.allocation) << " vs "
          << Describe(instance.state, want.allocation);
      EXPECT_EQ(got.reasons, want.reasons)
          << Describe(got.reasons) << " vs " << Describe(want.reasons);
    }
  });
}

}  // namespace
}  // namespace sluice::core
