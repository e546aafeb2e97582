// AgentRegistry::HeartbeatBatch: the batched heartbeat of an agent process that serves many
// hosts (wire/agent_batch.h, R-SCALE-1). Each host's part goes through the same steps as a
// single heartbeat (AgentRegistry::Heartbeat): its checks, its reports, its work; what the
// batch shares is one store commit for every host's reports and one long poll.
//
// The long poll looks at a host's work (CollectWork) when the host is marked in
// AgentWakeups (a launch committed, a kill ordered), when its part carries a report (its
// running jobs are checked), and otherwise at most once per kRescan (relaunches, peeks and
// kills that come unmarked), counted per host across requests: an agent that exchanges every
// 50 ms makes each of its polled hosts' jobs be walked 4 times a second, not 20. A wake-up of
// a poll over 1,250 hosts thus costs the marked hosts, not 1,250 walks over their jobs.
// A compact request (wire/agent_batch.h) gets no entry for a host with an empty answer.
#include <chrono>
#include <unordered_map>
#include <utility>

#include "server/agent_registry.h"
#include "server/http_reply.h"
#include "server/job_changes.h"

namespace sluice::server {
namespace {

using nlohmann::json;

constexpr auto kRescan = std::chrono::milliseconds(250);

const std::set<JobId>& NoJobs() {
  static const std::set<JobId> none;
  return none;
}

}  // namespace

Status AgentRegistry::BatchReports(const std::string& name, const HeartbeatReport* report,
                                   const std::string& instance, json& ack,
                                   store::WriteBatch& batch) {
  // A poll carries no epoch: only a report's can be stale.
  Result<Agent*> checked = CheckIn(name, instance, report != nullptr ? report->epoch : 0);
  if (!checked) return checked.error();
  Agent& agent = **checked;
  ++agent.poll_generation;
  if (report == nullptr) return Status::Ok();  // a poll: nothing to report
  if (report->load) agent.load = *report->load;
  if (report->health) ApplyHealth(name, *report->health);
  if (ctx_.writes().Writable()) {
    ApplyExits(name, *report, ack, batch);
    ApplyLaunchFailures(name, *report, ack, batch);
    ApplyRunning(name, agent, *report, batch);
  }
  if (peeks_ != nullptr) peeks_->Deliver(report->peeks);
  return Status::Ok();
}

// Steps: 1. each host's checks and reports (BatchReports); 2. one commit for all of them
// before any acknowledgement; 3. the long poll (BatchPoll, file comment) until some host has
// work, a host's newer heartbeat supersedes this one, or wait_ms passes; 4. the reply
// (BatchReply).
Result<json> AgentRegistry::HeartbeatBatch(const wire::BatchHeartbeatRequest& request,
                                           MutexLock& lock) {
  std::vector<BatchPart> parts;
  parts.reserve(request.hosts.size() + request.poll.size());
  for (const auto& [name, report] : request.hosts) {
    parts.push_back({.name = &name, .report = &report});
  }
  for (const std::string& name : request.poll) parts.push_back({.name = &name, .report = nullptr});
  // 1. Reports.
  store::WriteBatch batch;
  bool any_ack = false;
  std::unordered_map<std::string_view, size_t> index;
  for (size_t i = 0; i < parts.size(); ++i) {
    BatchPart& part = parts[i];
    const std::string& instance = part.report ? part.report->instance : request.instance;
    part.status = BatchReports(*part.name, part.report, instance, part.ack, batch);
    if (!part.status.ok()) continue;
    part.agent = agents_.at(*part.name).get();  // entries are never removed
    part.generation = part.agent->poll_generation;
    index.emplace(*part.name, i);
    any_ack = any_ack || !part.ack.empty();
  }
  ctx_.wakeups().WakeAll();  // older polls of these hosts answer now
  // 2. One commit.
  bool committed = true;
  if (!batch.empty()) {
    ctx_.cycle().MarkDirty();
    committed = ctx_.writes().WriteAndWait(lock, std::move(batch)).ok();
  } else if (any_ack) {
    committed = ctx_.writes().WaitCommitted(lock);  // as Heartbeat: rows of reports sent twice
  }
  if (!committed) {
    for (BatchPart& part : parts) part.ack = json();
    any_ack = false;
  }
  // 3. The long poll.
  BatchPoll(parts, index, request.wait_ms, any_ack, lock);
  // 4. The reply.
  return BatchReply(parts, request.compact);
}

bool AgentRegistry::BatchCollect(BatchPart& part) {
  if (part.agent->poll_generation != part.generation) {
    return true;  // superseded: answered now, as a single poll would be
  }
  part.agent->collected_ms = ctx_.NowMs();
  CollectWork(*part.name, part.report ? part.report->running : NoJobs(), part.launch, part.kill);
  return !part.launch.empty() || !part.kill.empty() || HasOrders(*part.name);
}

// Until some host has work (`any_ack`: acknowledgements to send), the controller stops or
// wait_ms passes: the marked hosts at each wake-up, the reporting ones at once, the others
// when their last look is kRescan old.
void AgentRegistry::BatchPoll(std::vector<BatchPart>& parts,
                              const std::unordered_map<std::string_view, size_t>& index,
                              int64_t wait_ms, bool any_ack, MutexLock& lock) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  const int64_t rescan_ms = kRescan.count();
  auto rescan = std::chrono::steady_clock::time_point::min();
  bool first = true;
  while (true) {
    bool work = any_ack || ctx_.stopping();
    ctx_.wakeups().TakeMarked(  // the marked ones
        [&](const std::string& host) { return index.contains(host); },
        [&](const std::string& host) { work = BatchCollect(parts[index.at(host)]) || work; });
    const auto now = std::chrono::steady_clock::now();
    if (now >= rescan) {  // the others whose last look is old enough
      rescan = now + kRescan;
      const int64_t now_ms = ctx_.NowMs();
      for (BatchPart& part : parts) {
        if (!part.status.ok()) continue;
        const bool due =
            (first && part.report != nullptr) || now_ms - part.agent->collected_ms >= rescan_ms;
        work = (due ? BatchCollect(part) : part.agent->poll_generation != part.generation) || work;
      }
      first = false;
    }
    if (work || now >= deadline) return;
    ctx_.wakeups().WaitUntil(lock, std::min(deadline, rescan));
  }
}

// One entry per host (a compact request: none for a host whose answer is empty), each the
// single heartbeat's reply, run-limit orders included (sluice modify of a running job).
json AgentRegistry::BatchReply(std::vector<BatchPart>& parts, bool compact) {
  json hosts = json::array();
  const int64_t now = ctx_.NowMs();
  for (BatchPart& part : parts) {
    if (!part.status.ok()) {
      hosts.push_back({{"name", *part.name},
                       {"status", HttpStatusOf(part.status.code())},
                       {"error", part.status.message()}});
      continue;
    }
    part.agent->last_heartbeat_ms = now;
    json run_limits;  // null: none (no array made for each of thousands of hosts)
    if (book_.HasRunLimitOrder(*part.name)) run_limits = TakeRunLimitOrders(book_, *part.name);
    if (compact && part.launch.empty() && part.kill.empty() && part.ack.empty() &&
        run_limits.empty() && !HasOrders(*part.name)) {
      continue;  // the agent reads its absence as this empty answer
    }
    for (json* list : {&part.launch, &part.kill, &part.ack, &run_limits}) {
      if (list->is_null()) *list = json::array();
    }
    json reply = HostReply(*part.name, std::move(part.launch), std::move(part.kill),
                           std::move(part.ack), std::move(run_limits));
    hosts.push_back({{"name", *part.name}, {"status", 200}, {"reply", std::move(reply)}});
  }
  return json{{"epoch", ctx_.writes().epoch()}, {"hosts", std::move(hosts)}};
}

}  // namespace sluice::server
