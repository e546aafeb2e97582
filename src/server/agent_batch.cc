// AgentRegistry::HeartbeatBatch: the batched heartbeat of an agent process that serves many
// hosts (wire/agent_batch.h, R-SCALE-1). Each host's part goes through the same steps as a
// single heartbeat (AgentRegistry::Heartbeat): its checks, its reports, its work; what the
// batch shares is one store commit for every host's reports and one long poll.
//
// The long poll looks at a host's work (CollectWork) when the request arrives, then at each
// wake-up only for the hosts marked in `ctx_.work_hosts` (a launch committed, a kill
// ordered), and at every host again each kRescanMs (relaunches, peeks and kills that come
// unmarked). A wake-up of a poll over 1,250 hosts thus costs the marked hosts, not 1,250
// walks over their jobs.
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
  if (ctx_.Writable()) {
    ApplyExits(name, *report, ack, batch);
    ApplyLaunchFailures(name, *report, ack, batch);
    ApplyRunning(name, agent, *report, batch);
  }
  if (peeks_ != nullptr) peeks_->Deliver(report->peeks);
  return Status::Ok();
}

// Steps: 1. each host's checks and reports (BatchReports); 2. one commit for all of them
// before any acknowledgement; 3. the long poll (file comment) until some host has work, a
// host's newer heartbeat supersedes this one, or wait_ms passes; 4. one reply entry per host.
Result<json> AgentRegistry::HeartbeatBatch(const wire::BatchHeartbeatRequest& request,
                                           std::unique_lock<std::mutex>& lock) {
  struct Part {
    const std::string* name;
    const HeartbeatReport* report;  // nullptr: a poll
    Status status;
    int64_t generation = 0;
    json ack = json::array();
    json launch = json::array();
    json kill = json::array();
  };
  std::vector<Part> parts;
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
    Part& part = parts[i];
    const std::string& instance = part.report ? part.report->instance : request.instance;
    part.status = BatchReports(*part.name, part.report, instance, part.ack, batch);
    if (!part.status.ok()) continue;
    part.generation = agents_.at(*part.name)->poll_generation;
    index.emplace(*part.name, i);
    any_ack = any_ack || !part.ack.empty();
  }
  ctx_.work_cv.notify_all();  // older polls of these hosts answer now
  // 2. One commit.
  bool committed = true;
  if (!batch.empty()) {
    ctx_.MarkDirty();
    committed = ctx_.WriteAndWait(lock, std::move(batch)).ok();
  } else if (any_ack) {
    committed = ctx_.WaitCommitted(lock);  // as Heartbeat: rows of reports sent twice
  }
  if (!committed) {
    for (Part& part : parts) part.ack = json::array();
    any_ack = false;
  }
  // 3. The long poll.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(request.wait_ms);
  const auto collect = [&](Part& part) {
    auto agent = agents_.find(*part.name);
    if (agent == agents_.end() || agent->second->poll_generation != part.generation) {
      return true;  // superseded: answered now, as a single poll would be
    }
    CollectWork(*part.name, part.report ? part.report->running : NoJobs(), part.launch, part.kill);
    return !part.launch.empty() || !part.kill.empty() ||
           (peeks_ != nullptr && peeks_->HasOrders(*part.name));
  };
  auto rescan = std::chrono::steady_clock::time_point::min();
  while (true) {
    bool work = any_ack || ctx_.stopping;
    const auto now = std::chrono::steady_clock::now();
    if (now >= rescan) {  // every host
      rescan = now + kRescan;
      for (Part& part : parts) work = (part.status.ok() && collect(part)) || work;
    } else {  // the marked ones
      for (auto it = ctx_.work_hosts.begin(); it != ctx_.work_hosts.end();) {
        auto found = index.find(*it);
        if (found == index.end()) {
          ++it;
          continue;
        }
        it = ctx_.work_hosts.erase(it);
        work = collect(parts[found->second]) || work;
      }
    }
    if (work || now >= deadline) break;
    ctx_.work_cv.wait_until(lock, std::min(deadline, rescan));
  }
  // 4. The reply.
  json hosts = json::array();
  const int64_t now = ctx_.NowMs();
  for (Part& part : parts) {
    if (!part.status.ok()) {
      hosts.push_back({{"name", *part.name},
                       {"status", HttpStatusOf(part.status.code())},
                       {"error", part.status.message()}});
      continue;
    }
    if (auto agent = agents_.find(*part.name); agent != agents_.end()) {
      agent->second->last_heartbeat_ms = now;
    }
    // The single heartbeat's reply, run-limit orders included (sluice modify of a running job).
    json reply = HostReply(*part.name, std::move(part.launch), std::move(part.kill),
                           std::move(part.ack), TakeRunLimitOrders(book_, *part.name));
    hosts.push_back({{"name", *part.name}, {"status", 200}, {"reply", std::move(reply)}});
  }
  return json{{"epoch", ctx_.epoch}, {"hosts", std::move(hosts)}};
}

}  // namespace sluice::server
