#include "core/model/cluster_state.h"

#include <algorithm>
#include <utility>

#include "core/resreq/eval.h"
#include "core/resreq/parser.h"
#include "core/resreq/validate.h"

namespace sluice::core {

Result<ClusterState> ClusterState::Create(const ClusterConfig& config) {
  ClusterState state;
  for (const HostSpec& spec : config.hosts) {
    SLUICE_RETURN_IF_ERROR(state.AddHost(spec));
  }
  if (config.queues.empty()) {
    return InvalidArgument("queues: at least one queue is required");
  }
  state.config_ = config;
  for (const QueueSpec& spec : config.queues) {
    SLUICE_RETURN_IF_ERROR(state.AddQueue(spec));
  }
  state.SetSharedResources(config.shared_resources);
  if (!config.default_queue.empty()) {
    auto queue = state.FindQueue(config.default_queue);
    if (!queue) return NotFound("default_queue: no queue named '" + config.default_queue + "'");
    state.default_queue_ = *queue;
  }
  state.ConfigureLimits();
  return state;
}

void ClusterState::ConfigureLimits() {
  std::vector<std::string> names;
  names.reserve(hosts_.size());
  for (const Host& host : hosts_) names.push_back(host.spec.name);
  limit_usage_.Configure(config_.limits, names, config_.host_groups);
  for (const RunningEntry& entry : running_) {
    limit_usage_.Charge(*entry.job, queues_[entry.job->queue].spec.name, entry.job->allocation, +1,
                        host_resources_, shared_resources_);
  }
}

Status ClusterState::AddHost(HostSpec spec) {
  if (spec.slots < 0) {
    return InvalidArgument("host '" + spec.name + "': slots must be >= 0");
  }
  if (host_by_name_.contains(spec.name)) {
    return Status(StatusCode::kAlreadyExists, "host '" + spec.name + "' is defined twice");
  }
  for (const auto& [name, amount] : spec.resources) {
    if (amount < 0) {
      return InvalidArgument("host '" + spec.name + "': resource " + name + " must be >= 0");
    }
  }
  Host host;
  host.index = static_cast<HostIndex>(hosts_.size());
  host_by_name_.emplace(spec.name, host.index);
  SetHostSpec(host, std::move(spec));
  total_slots_ += host.spec.slots;
  if (host.AcceptsWork()) free_slots_ += host.spec.slots;
  hosts_.push_back(std::move(host));
  SyncHostSlots(hosts_.back());
  if (!config_.limits.empty()) ConfigureLimits();  // host scopes name hosts
  return Status::Ok();
}

ClusterState::SelectMemo& ClusterState::MemoOf(resreq::ExprId select) const {
  auto [it, inserted] = select_memo_.try_emplace(select);
  SelectMemo& memo = it->second;
  if (inserted) {
    memo.reads_free_amounts = resreq::ReadsFreeAmounts(
        select, *expr_pool_, [&](std::string_view name) { return FindHostResource(name).has_value(); });
    memo.verdicts.assign(hosts_.size(), 0);
    memo.tests_free_amounts = TestsFreeAmounts(select);
  }
  return memo;
}

const uint8_t* ClusterState::SelectVerdicts(resreq::ExprId select) const {
  if (select == resreq::kNoExpr) return nullptr;
  return MemoOf(select).verdicts.data();
}

bool ClusterState::SelectIsStatic(resreq::ExprId select) const {
  return select == resreq::kNoExpr || !MemoOf(select).reads_free_amounts;
}

bool ClusterState::SelectTestsFreeAmounts(resreq::ExprId select) const {
  return select != resreq::kNoExpr && MemoOf(select).tests_free_amounts;
}

bool ClusterState::TestsFreeAmounts(resreq::ExprId id) const {
  const resreq::ExprPool& pool = *expr_pool_;
  auto consumable = [&](std::string_view name) {
    if (name == "slots" || FindHostResource(name)) return true;
    return false;
  };
  const resreq::ExprOp op = pool.op(id);
  if (op == resreq::ExprOp::kIdent || op == resreq::ExprOp::kTag) return consumable(pool.text(id));
  if (op == resreq::ExprOp::kDefined) return false;
  const auto operands = pool.operands(id);
  if (resreq::IsComparison(op)) {
    const resreq::ExprId a = operands[0].id;
    const resreq::ExprId b = operands[1].id;
    auto word = [&](resreq::ExprId x, resreq::ExprId other) {  // `gpu` in `type==gpu`
      return pool.op(x) == resreq::ExprOp::kIdent && pool.op(other) == resreq::ExprOp::kIdent &&
             !consumable(pool.text(other));
    };
    return (!word(a, b) && TestsFreeAmounts(a)) || (!word(b, a) && TestsFreeAmounts(b));
  }
  for (const resreq::Operand& operand : operands) {
    if (TestsFreeAmounts(operand.id)) return true;
  }
  return false;
}

bool ClusterState::PassesSelectSlow(resreq::ExprId select, HostIndex host,
                                    const resreq::HostView& view) const {
  SelectMemo& memo = MemoOf(select);  // one lookup on this hot path
  uint8_t& verdict = memo.verdicts[host];
  if (verdict == kSelectPasses || verdict == kSelectFails) return verdict == kSelectPasses;
  if (verdict == kSelectReadsFree) return resreq::EvalSelect(select, *expr_pool_, view);
  bool read_free = false;
  const bool passes = resreq::EvalSelect(select, *expr_pool_, view, read_free);
  verdict = read_free ? kSelectReadsFree : passes ? kSelectPasses : kSelectFails;
  return passes;
}

void ClusterState::SyncHostSlots(const Host& host) {
  const size_t h = host.index;
  if (h >= host_slots_.free.size()) {
    host_slots_.free.resize(h + 1);
    host_slots_.total.resize(h + 1);
    host_slots_.accepts_work.resize(h + 1);
    host_slots_.idle.resize(h + 1);
  }
  const bool works = host.AcceptsWork();
  host_slots_.free[h] = works ? host.FreeSlots() : 0;
  host_slots_.total[h] = host.spec.slots;
  host_slots_.accepts_work[h] = works;
  host_slots_.idle[h] = works && host.running_jobs == 0;
}

void ClusterState::SetHostSpec(Host& host, HostSpec spec) {
  select_memo_.clear();  // attributes, tags or resource names may have changed
  feasibility_memo_.clear();
  host.spec = std::move(spec);
  host.resource_total.assign(host_resources_.size(), 0);
  for (const auto& [name, amount] : host.spec.resources) {
    const ResourceId id = InternHostResource(name);
    if (id >= host.resource_total.size()) host.resource_total.resize(id + 1, 0);
    host.resource_total[id] = amount;
  }
}

ResourceId ClusterState::InternHostResource(const std::string& name) {
  for (ResourceId id = 0; id < host_resources_.size(); ++id) {
    if (host_resources_[id] == name) return id;
  }
  host_resources_.push_back(name);
  return static_cast<ResourceId>(host_resources_.size() - 1);
}

void ClusterState::SetSharedResources(const std::map<std::string, int64_t>& totals) {
  feasibility_memo_.clear();
  for (const auto& [name, total] : totals) {
    auto id = FindSharedResource(name);
    if (!id) {
      shared_resources_.push_back(name);
      shared_total_.push_back(0);
      shared_used_.push_back(0);
      id = static_cast<ResourceId>(shared_resources_.size() - 1);
    }
    shared_total_[*id] = total;
  }
  // A shared resource dropped from the configuration keeps its id with no capacity.
  for (ResourceId id = 0; id < shared_resources_.size(); ++id) {
    if (!totals.contains(shared_resources_[id])) shared_total_[id] = 0;
  }
}

std::optional<ResourceId> ClusterState::FindHostResource(std::string_view name) const {
  for (ResourceId id = 0; id < host_resources_.size(); ++id) {
    if (host_resources_[id] == name) return id;
  }
  return std::nullopt;
}

std::optional<ResourceId> ClusterState::FindSharedResource(std::string_view name) const {
  for (ResourceId id = 0; id < shared_resources_.size(); ++id) {
    if (shared_resources_[id] == name) return id;
  }
  return std::nullopt;
}

Status ClusterState::AddQueue(const QueueSpec& spec) {
  if (queue_by_name_.contains(spec.name)) {
    return Status(StatusCode::kAlreadyExists, "queue '" + spec.name + "' is defined twice");
  }
  Queue queue;
  queue.index = static_cast<QueueIndex>(queues_.size());
  queue.spec = spec;
  SLUICE_RETURN_IF_ERROR(ResolveQueueHosts(queue));
  Result<DispatchWindows> windows = DispatchWindows::Parse(spec.windows);
  if (!windows) return windows.error().WithPrefix("queue '" + spec.name + "': windows");
  feasibility_memo_.clear();
  queue_by_name_.emplace(spec.name, queue.index);
  queues_.push_back(std::move(queue));
  windows_.push_back(std::move(*windows));
  return Status::Ok();
}

Status ClusterState::ResolveQueueHosts(Queue& queue) const {
  queue.hosts.clear();
  queue.all_hosts = queue.spec.host_group.empty();
  if (queue.all_hosts) return Status::Ok();
  auto group = config_.host_groups.find(queue.spec.host_group);
  if (group == config_.host_groups.end()) {
    return NotFound("queue '" + queue.spec.name + "': no host group named '" +
                    queue.spec.host_group + "'");
  }
  for (const std::string& name : group->second) {
    auto host = FindHost(name);
    if (!host) {
      return NotFound("host group '" + group->first + "': no host named '" + name + "'");
    }
    queue.hosts.push_back(*host);
  }
  std::sort(queue.hosts.begin(), queue.hosts.end());
  queue.hosts.erase(std::unique(queue.hosts.begin(), queue.hosts.end()), queue.hosts.end());
  return Status::Ok();
}

std::optional<HostIndex> ClusterState::FindHost(std::string_view name) const {
  auto it = host_by_name_.find(std::string(name));
  if (it == host_by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<QueueIndex> ClusterState::FindQueue(std::string_view name) const {
  auto it = queue_by_name_.find(std::string(name));
  if (it == queue_by_name_.end()) return std::nullopt;
  return it->second;
}

ClusterState ClusterState::Clone() const {
  ClusterState copy(*this);
  copy.expr_pool_ = std::make_shared<resreq::ExprPool>(*expr_pool_);  // same ids
  std::unordered_map<const resreq::Request*, const resreq::Request*> moved;
  for (auto& [text, request] : copy.requests_) {
    auto fresh = std::make_shared<resreq::Request>(*request);
    moved.emplace(request.get(), fresh.get());
    request = std::move(fresh);
  }
  for (auto& [id, job] : copy.jobs_) {
    if (auto it = moved.find(job.request); it != moved.end()) job.request = it->second;
  }
  copy.feasibility_memo_.clear();  // keyed by the source's request pointers
  for (Queue& queue : copy.queues_) {
    PendingSet relinked;
    for (const PendingEntry& entry : queue.pending) {
      relinked.insert(PendingEntry{entry.neg_priority, entry.seq, copy.MutableJob(entry.job->spec.id)});
    }
    queue.pending = std::move(relinked);
  }
  std::set<RunningEntry> running;
  for (const RunningEntry& entry : running_) {
    running.insert(RunningEntry{entry.start_seq, copy.MutableJob(entry.job->spec.id)});
  }
  copy.running_ = std::move(running);
  return copy;
}

const Job* ClusterState::FindJob(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

Job* ClusterState::MutableJob(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

Result<const resreq::Request*> ClusterState::CompileRequest(const std::string& text) {
  auto it = requests_.find(text);
  if (it != requests_.end()) return it->second.get();
  Result<resreq::Request> parsed = resreq::Parse(text, *expr_pool_);
  if (!parsed) return parsed.error();
  resreq::ResourceCatalog catalog;
  catalog.host_resources.insert(host_resources_.begin(), host_resources_.end());
  catalog.shared_resources.insert(shared_resources_.begin(), shared_resources_.end());
  SLUICE_RETURN_IF_ERROR(resreq::Validate(*parsed, *expr_pool_, catalog));
  auto request = std::make_shared<resreq::Request>(std::move(parsed).value());
  const resreq::Request* result = request.get();
  requests_.emplace(text, std::move(request));
  return result;
}

namespace {

// The fewest slots an alternative can run with: a compound's counts are fixed; a plain
// primary (count 0) takes the job's task range.
int32_t MinSlots(const resreq::Request& request, const JobSpec& spec) {
  int32_t best = -1;
  for (const resreq::Compound& alternative : request.alternatives) {
    int32_t slots = 0;
    for (const resreq::Primary& part : alternative.parts) {
      slots += part.count > 0 ? part.count : spec.min_tasks;
    }
    if (best < 0 || slots < best) best = slots;
  }
  return best;
}

// What a dependency reads of a job (in the table or, once ended, kept outside it).
DependTarget DependTargetOf(const Job& job) {
  return DependTarget{.state = job.state, .started = job.start_seq != 0};
}

}  // namespace

Status ClusterState::Submit(JobSpec spec) {
  if (jobs_.contains(spec.id)) {
    return Status(StatusCode::kAlreadyExists, "job " + std::to_string(spec.id) + " exists");
  }
  if (ended_.contains(spec.id)) {  // its dependents would follow the new job
    return Status(StatusCode::kAlreadyExists, "job " + std::to_string(spec.id) + " has ended");
  }
  if (spec.min_tasks < 1 || spec.max_tasks < spec.min_tasks) {
    return InvalidArgument("job " + std::to_string(spec.id) + ": tasks must satisfy 1 <= min (" +
                           std::to_string(spec.min_tasks) + ") <= max (" +
                           std::to_string(spec.max_tasks) + ")");
  }
  QueueIndex queue_index = default_queue_;
  if (!spec.queue.empty()) {
    auto found = FindQueue(spec.queue);
    if (!found) {
      return NotFound("job " + std::to_string(spec.id) + ": no queue named '" + spec.queue + "'");
    }
    queue_index = *found;
  }
  const std::string& text =
      spec.resreq.empty() ? queues_[queue_index].spec.default_resreq : spec.resreq;
  Result<const resreq::Request*> request = CompileRequest(text);
  if (!request) {
    return request.error().WithPrefix("job " + std::to_string(spec.id) + ": resreq");
  }
  std::optional<Dependency> dependency;
  if (!spec.depend.empty()) {
    Result<Dependency> parsed = Dependency::Parse(spec.depend);
    if (!parsed) return parsed.error().WithPrefix("job " + std::to_string(spec.id) + ": depend");
    dependency = std::move(*parsed);
  }
  const JobId id = spec.id;
  Job& job = jobs_[id];
  job.spec = std::move(spec);
  job.request = *request;
  job.min_slots = MinSlots(**request, job.spec);
  job.queue = queue_index;
  job.seq = next_seq_++;
  job.admission.enqueue_time = job.spec.submit_time;
  job.admission.spec_digest = SpecDigest(job.spec);
  job.admission.policy = queues_[queue_index].spec.policy;
  job.state = job.spec.hold ? JobState::kHeld : JobState::kPending;
  queues_[queue_index].pending.insert(PendingEntry{-job.spec.priority, job.seq, &job});
  if (job.spec.begin_time > job.spec.submit_time) future_begins_.insert({job.spec.begin_time, id});
  unclassified_.push_back(id);
  if (dependency) {
    for (JobId named : dependency->jobs()) dependents_[named].push_back(id);
    DependEvaluation eval = EvaluateDependency(*dependency);
    depends_.emplace(id, DependState{.expression = std::move(*dependency), .eval = std::move(eval)});
  }
  // A restored job may be named by jobs restored before it, which judged it missing.
  UpdateDependents(id);
  return Status::Ok();
}

DependEvaluation ClusterState::EvaluateDependency(const Dependency& dependency) const {
  return dependency.Evaluate([this](JobId named) -> std::optional<DependTarget> {
    const Job* job = FindJob(named);
    if (job != nullptr) return DependTargetOf(*job);
    auto ended = ended_.find(named);
    if (ended != ended_.end()) return ended->second;
    return std::nullopt;
  });
}

Status ClusterState::NoteEnded(JobId id, JobState state, bool started) {
  if (!IsTerminal(state)) {
    return InvalidArgument("job " + std::to_string(id) + ": " + std::string(ToString(state)) +
                           " is not an ended state");
  }
  if (jobs_.contains(id)) {
    return Status(StatusCode::kAlreadyExists, "job " + std::to_string(id) + " exists");
  }
  ended_[id] = DependTarget{.state = state, .started = started};
  UpdateDependents(id);
  return Status::Ok();
}

Status ClusterState::Withdraw(JobId id) {
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  if ((job->state != JobState::kPending && job->state != JobState::kHeld) || job->start_seq != 0) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              std::string(ToString(job->state)) + "; only a new job is withdrawn");
  }
  RemovePending(*job);
  if (auto dep = depends_.find(id); dep != depends_.end()) {
    for (JobId named : dep->second.expression.jobs()) {
      if (auto it = dependents_.find(named); it != dependents_.end()) std::erase(it->second, id);
    }
    depends_.erase(dep);
  }
  dependents_.erase(id);
  jobs_.erase(id);
  return Status::Ok();
}

Status ClusterState::Forget(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + std::to_string(id) + " does not exist");
  const Job& job = it->second;
  if (!IsTerminal(job.state)) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              std::string(ToString(job.state)) + ", not ended");
  }
  ended_[id] = DependTargetOf(job);
  depends_.erase(id);
  dependents_.erase(id);  // their verdicts on it are final now
  preemptions_.erase(id);
  jobs_.erase(it);
  return Status::Ok();
}

void ClusterState::UpdateDependents(JobId changed) {
  auto it = dependents_.find(changed);
  if (it == dependents_.end()) return;
  for (JobId dependent : it->second) {
    const Job* job = FindJob(dependent);
    if (job == nullptr || (job->state != JobState::kPending && job->state != JobState::kHeld)) {
      continue;  // it no longer waits
    }
    DependState& dep = depends_.at(dependent);
    dep.eval = EvaluateDependency(dep.expression);
  }
}

Status ClusterState::SetQueueStatus(std::string_view name, std::optional<bool> open,
                                    std::optional<bool> active) {
  auto index = FindQueue(name);
  if (!index) return NotFound("no queue named '" + std::string(name) + "'");
  QueueSpec& spec = queues_[*index].spec;
  if (open) spec.open = *open;
  if (active) spec.active = *active;
  for (QueueSpec& configured : config_.queues) {  // a later Reconfigure starts from here
    if (configured.name == spec.name) configured = spec;
  }
  return Status::Ok();
}

Status ClusterState::Restore(JobSpec spec, uint64_t seq, const AdmissionRecord& record) {
  const JobId id = spec.id;
  const std::optional<QueueIndex> queue =
      spec.queue.empty() ? std::optional<QueueIndex>(default_queue_) : FindQueue(spec.queue);
  if (queue && queues_[*queue].pending.contains(PendingEntry{-spec.priority, seq, nullptr})) {
    return Status(StatusCode::kAlreadyExists, "job " + std::to_string(id) + ": sequence " +
                                                  std::to_string(seq) + " is taken");
  }
  const uint64_t next_seq = next_seq_;
  SLUICE_RETURN_IF_ERROR(Submit(std::move(spec)));
  Job& job = *MutableJob(id);
  PendingSet& pending = queues_[job.queue].pending;
  pending.erase(PendingEntry{-job.spec.priority, job.seq, &job});
  pending.insert(PendingEntry{-job.spec.priority, seq, &job});
  job.seq = seq;
  job.admission = record;
  job.admission.phase = AdmissionPhase::kPending;
  next_seq_ = std::max(next_seq, seq + 1);
  return Status::Ok();
}

Status ClusterState::Requeue(JobId id) {
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  if (job->state != JobState::kRunning && job->state != JobState::kAdmitting) {
    return FailedPrecondition("job " + std::to_string(id) + " is not running but " +
                              std::string(ToString(job->state)));
  }
  Release(*job);
  job->allocation = Allocation{};
  job->preempted_for = kNoJob;
  job->state = JobState::kPending;
  job->admission.phase = AdmissionPhase::kPending;
  queues_[job->queue].pending.insert(PendingEntry{-job->spec.priority, job->seq, job});
  if (job->spec.begin_time > job->spec.submit_time) {
    future_begins_.insert({job->spec.begin_time, id});
  }
  return Status::Ok();
}

Status ClusterState::SetHeld(JobId id, bool held) {
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  const JobState from = held ? JobState::kPending : JobState::kHeld;
  if (job->state != from) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              std::string(ToString(job->state)) + ", not " +
                              std::string(ToString(from)));
  }
  job->state = held ? JobState::kHeld : JobState::kPending;
  return Status::Ok();
}

void ClusterState::RemovePending(Job& job) {
  size_t erased = queues_[job.queue].pending.erase(PendingEntry{-job.spec.priority, job.seq, &job});
  SLUICE_CHECK(erased == 1);
  future_begins_.erase({job.spec.begin_time, job.spec.id});
}

void ClusterState::Release(Job& job) {
  for (const HostGrant& grant : job.allocation.hosts) {
    Host& host = hosts_[grant.host];
    const int32_t taken = host.SlotsTaken(grant);
    host.used_slots -= taken;
    host.running_jobs -= 1;
    SLUICE_CHECK(host.used_slots >= 0);
    if (host.AcceptsWork()) free_slots_ += taken;
    SyncHostSlots(host);
    for (const ResourceAmount& r : grant.resources) host.resource_used[r.id] -= r.amount;
  }
  for (const ResourceAmount& r : job.allocation.shared) shared_used_[r.id] -= r.amount;
  Queue& queue = queues_[job.queue];
  limit_usage_.Charge(job, queue.spec.name, job.allocation, -1, host_resources_, shared_resources_);
  queue.running_jobs -= 1;
  queue.used_slots -= job.allocation.TotalSlots();
  running_.erase(RunningEntry{job.start_seq, &job});
  running_by_end_.erase(RunningByEnd{.end = job.EstimatedEnd(), .start_seq = job.start_seq});
  job.allocation.hosts.clear();
}

Status ClusterState::Cancel(JobId id, Instant now) {
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  switch (job->state) {
    case JobState::kPending:
    case JobState::kHeld:
      RemovePending(*job);
      break;
    case JobState::kAdmitting:
    case JobState::kRunning:
      ChargeFairshare(*job, now);
      Release(*job);
      break;
    default:
      return FailedPrecondition("job " + std::to_string(id) + " is already " +
                                std::string(ToString(job->state)));
  }
  job->state = JobState::kCancelled;
  job->admission.phase = AdmissionPhase::kEnded;
  job->end_time = now;
  UpdateDependents(id);
  return Status::Ok();
}

Status ClusterState::Finish(JobId id, Instant now, int32_t exit_code, ExitCause cause) {
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  if (job->state != JobState::kRunning && job->state != JobState::kAdmitting) {
    return FailedPrecondition("job " + std::to_string(id) + " is not running but " +
                              std::string(ToString(job->state)));
  }
  ChargeFairshare(*job, now);
  runtime_history_.Record(job->spec.user, now - job->start_time);
  Release(*job);
  if (cause == ExitCause::kNone && exit_code != 0) cause = ExitCause::kNonZeroExit;
  job->state = cause == ExitCause::kNone ? JobState::kDone : JobState::kExit;
  job->admission.phase = AdmissionPhase::kEnded;
  job->exit_cause = cause;
  job->exit_code = exit_code;
  job->end_time = now;
  UpdateDependents(id);
  return Status::Ok();
}

void ClusterState::Start(JobId id, Allocation allocation, Instant now) {
  Job* job = MutableJob(id);
  SLUICE_CHECK(job != nullptr && job->state == JobState::kPending);
  RemovePending(*job);
  for (const HostGrant& grant : allocation.hosts) {
    Host& host = hosts_[grant.host];
    const int32_t taken = host.SlotsTaken(grant);
    SLUICE_CHECK(grant.slots > 0 && taken <= host.FreeSlots() && host.AcceptsWork());
    SLUICE_CHECK(!grant.whole_host || host.running_jobs == 0);
    host.used_slots += taken;
    host.running_jobs += 1;
    free_slots_ -= taken;
    SyncHostSlots(host);
    for (const ResourceAmount& r : grant.resources) {
      SLUICE_CHECK(r.amount <= host.ResourceFree(r.id));
      if (r.id >= host.resource_used.size()) host.resource_used.resize(r.id + 1, 0);
      host.resource_used[r.id] += r.amount;
    }
  }
  for (const ResourceAmount& r : allocation.shared) {
    SLUICE_CHECK(r.amount <= shared_total_[r.id] - shared_used_[r.id]);
    shared_used_[r.id] += r.amount;
  }
  Queue& queue = queues_[job->queue];
  queue.running_jobs += 1;
  queue.used_slots += allocation.TotalSlots();
  preemptions_.erase(id);  // what was freed for it is its own now
  job->allocation = std::move(allocation);
  limit_usage_.Charge(*job, queue.spec.name, job->allocation, +1, host_resources_, shared_resources_);
  job->state = JobState::kRunning;
  job->admission.phase = AdmissionPhase::kAdmitted;
  job->start_time = now;
  job->start_seq = next_start_seq_++;
  running_.insert(RunningEntry{job->start_seq, job});
  running_by_end_.insert(RunningByEnd{.end = job->EstimatedEnd(),
                                      .start_seq = job->start_seq,
                                      .slots = job->allocation.TotalSlots()});
  UpdateDependents(id);
}

void ClusterState::Fail(JobId id, ExitCause cause, Instant now) {
  Job* job = MutableJob(id);
  SLUICE_CHECK(job != nullptr &&
               (job->state == JobState::kPending || job->state == JobState::kHeld));
  RemovePending(*job);
  job->state = JobState::kExit;
  job->admission.phase = AdmissionPhase::kEnded;
  job->exit_cause = cause;
  job->end_time = now;
  UpdateDependents(id);
}

Status ClusterState::SetHostState(std::string_view name, HostState new_state) {
  auto index = FindHost(name);
  if (!index) return NotFound("no host named '" + std::string(name) + "'");
  Host& host = hosts_[*index];
  if (host.AcceptsWork()) free_slots_ -= host.FreeSlots();
  host.spec.state = new_state;
  if (host.AcceptsWork()) free_slots_ += host.FreeSlots();
  SyncHostSlots(host);
  return Status::Ok();
}

Status ClusterState::Reconfigure(const ClusterConfig& config) {
  // Validate whole before touching anything, so a rejected config changes nothing.
  for (const Host& host : hosts_) {
    bool kept = std::any_of(config.hosts.begin(), config.hosts.end(),
                            [&](const HostSpec& s) { return s.name == host.spec.name; });
    if (!kept && host.running_jobs > 0) {
      return FailedPrecondition("host '" + host.spec.name + "' still runs jobs");
    }
  }
  for (const Queue& queue : queues_) {
    bool kept = std::any_of(config.queues.begin(), config.queues.end(),
                            [&](const QueueSpec& s) { return s.name == queue.spec.name; });
    if (!kept && (queue.running_jobs > 0 || !queue.pending.empty())) {
      return FailedPrecondition("queue '" + queue.spec.name + "' still has jobs");
    }
  }
  for (const QueueSpec& queue : config.queues) {
    Result<DispatchWindows> windows = DispatchWindows::Parse(queue.windows);
    if (!windows) return windows.error().WithPrefix("queue '" + queue.name + "': windows");
    if (queue.host_group.empty()) continue;
    auto group = config.host_groups.find(queue.host_group);
    if (group == config.host_groups.end()) {
      return NotFound("queue '" + queue.name + "': no host group named '" + queue.host_group + "'");
    }
    for (const std::string& name : group->second) {
      bool known = std::any_of(config.hosts.begin(), config.hosts.end(),
                               [&](const HostSpec& h) { return h.name == name; });
      if (!known) return NotFound("host group '" + group->first + "': no host named '" + name + "'");
    }
  }
  for (const HostSpec& spec : config.hosts) {
    auto index = FindHost(spec.name);
    if (!index) continue;
    if (spec.slots < hosts_[*index].used_slots) {
      return FailedPrecondition("host '" + spec.name + "': slots " + std::to_string(spec.slots) +
                                " below the " + std::to_string(hosts_[*index].used_slots) +
                                " in use");
    }
  }
  // A removed host or queue stays in its vector (indices never move): a host becomes unavail
  // with no slots (no longer capacity), a queue inactive and closed.
  for (const HostSpec& spec : config.hosts) {
    auto index = FindHost(spec.name);
    if (!index) {
      SLUICE_RETURN_IF_ERROR(AddHost(spec));
      continue;
    }
    Host& host = hosts_[*index];
    if (host.AcceptsWork()) free_slots_ -= host.FreeSlots();
    total_slots_ += spec.slots - host.spec.slots;
    SetHostSpec(host, spec);
    if (host.AcceptsWork()) free_slots_ += host.FreeSlots();
    SyncHostSlots(host);
  }
  SetSharedResources(config.shared_resources);
  for (Host& host : hosts_) {
    bool kept = std::any_of(config.hosts.begin(), config.hosts.end(),
                            [&](const HostSpec& s) { return s.name == host.spec.name; });
    if (!kept) {
      SLUICE_RETURN_IF_ERROR(SetHostState(host.spec.name, HostState::kUnavail));
      total_slots_ -= host.spec.slots;
      host.spec.slots = 0;
      SyncHostSlots(host);
    }
  }
  config_ = config;
  for (const QueueSpec& spec : config.queues) {
    auto index = FindQueue(spec.name);
    if (!index) {
      SLUICE_RETURN_IF_ERROR(AddQueue(spec));
    } else {
      queues_[*index].spec = spec;
      windows_[*index] = DispatchWindows::Parse(spec.windows).value();  // checked above
      SLUICE_RETURN_IF_ERROR(ResolveQueueHosts(queues_[*index]));
      feasibility_memo_.clear();
    }
  }
  for (Queue& queue : queues_) {
    bool kept = std::any_of(config.queues.begin(), config.queues.end(),
                            [&](const QueueSpec& s) { return s.name == queue.spec.name; });
    if (!kept) {
      queue.spec.open = false;
      queue.spec.active = false;
    }
  }
  default_queue_ = 0;
  if (!config.default_queue.empty()) {
    auto queue = FindQueue(config.default_queue);
    if (queue) default_queue_ = *queue;
  } else if (!config.queues.empty()) {
    default_queue_ = *FindQueue(config.queues.front().name);
  }
  config_ = config;
  ConfigureLimits();
  // R-ADM-1: every pending job is classified again after a configuration change.
  unclassified_.clear();
  for (const Queue& queue : queues_) {
    for (const PendingEntry& entry : queue.pending) {
      entry.job->classified = false;
      unclassified_.push_back(entry.job->spec.id);
    }
  }
  return Status::Ok();
}

void ClusterState::ChargeFairshare(const Job& job, Instant now) {
  const QueueSpec& spec = queues_[job.queue].spec;
  if (spec.fairshare.empty() || now <= job.start_time) return;
  const double used = static_cast<double>(now - job.start_time) * job.allocation.TotalSlots();
  fairshare_usage_[{job.queue, job.spec.user}].Add(used, now, spec.fairshare_half_life);
}

void ClusterState::MarkPreempted(JobId victim, JobId for_job) {
  Job* job = MutableJob(victim);
  SLUICE_CHECK(job != nullptr &&
               (job->state == JobState::kRunning || job->state == JobState::kAdmitting));
  job->preempted_for = for_job;
  Preemption& preemption = preemptions_[for_job];
  preemption.victims.push_back(victim);
  for (const HostGrant& grant : job->allocation.hosts) {
    auto at = std::lower_bound(preemption.hosts.begin(), preemption.hosts.end(), grant.host);
    if (at == preemption.hosts.end() || *at != grant.host) preemption.hosts.insert(at, grant.host);
  }
}

void ClusterState::AddTotals(QueueIndex queue, const AdmissionTotals& delta) {
  AdmissionTotals& t = queues_[queue].totals;
  t.admitted += delta.admitted;
  t.backfilled += delta.backfilled;
  t.temporarily_unavailable += delta.temporarily_unavailable;
  t.unschedulable += delta.unschedulable;
  t.preempted += delta.preempted;
}

void ClusterState::UpdateAdmission(JobId id, int32_t bypass_count,
                                   std::optional<Instant> first_blocked,
                                   std::optional<Instant> gate_since) {
  Job* job = MutableJob(id);
  SLUICE_CHECK(job != nullptr);
  job->admission.bypass_count = bypass_count;
  job->admission.first_blocked = first_blocked;
  job->admission.gate_since = gate_since;
}

void ClusterState::MarkClassified() {
  for (JobId id : unclassified_) {
    Job* job = MutableJob(id);
    if (job != nullptr) job->classified = true;
  }
  unclassified_.clear();
}

}  // namespace sluice::core
