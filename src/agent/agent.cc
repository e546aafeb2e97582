#include "agent/agent.h"

#include <httplib.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "base/array_ids.h"
#include "agent/controller_client.h"
#include "agent/health_check.h"
#include "agent/host_load.h"
#include "agent/instance_name.h"
#include "agent/job_script.h"
#include "agent/job_tmpdir.h"
#include "agent/job_shepherd.h"
#include "agent/journal.h"
#include "agent/lease_file.h"
#include "agent/leftover_sweep.h"
#include "agent/peek_reader.h"
#include "agent/report_budget.h"
#include "agent/service_status.h"
#include "agent/step_session.h"
#include "agent/test_faults.h"
#include "auth/munge.h"
#include "daemon/service_notifier.h"
#include "wire/leader_follow.h"
#include "wire/protocol_version.h"
#include "wire/signal_name.h"

namespace sluice::agent {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// How often an agent whose protocol the controller refused registers again (R-OPS-5).
constexpr auto kProtocolRetry = 30s;

struct HttpReply {
  int status = 0;  // 0: no response (connection failed or timed out)
  json body;
  std::string error;   // transport error or the server's {"error": ...}
  std::string leader;  // a standby's 307 Location or 503 `leader` (R-HA-2)
};

std::unique_ptr<httplib::Client> MakeClient(const AgentOptions& options, const std::string& url,
                                            std::chrono::milliseconds read_timeout) {
  return NewControllerClient(url, options.ca_file,
                             {.connect = 1s, .read = read_timeout, .write = 2s});
}

// The agent token, else a fresh MUNGE credential (uid 0: the agent role, R-SEC-2).
Result<std::string> Authorization(const AgentOptions& options) {
  if (!options.token.empty() || options.munge_socket.empty()) return "Bearer " + options.token;
  Result<std::string> credential = auth::MungeEncode(options.munge_socket);
  if (!credential) return credential.error();
  return "Munge " + *credential;
}

// A transport failure in words an operator can act on (cpp-httplib's own are one word).
std::string TransportError(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "connection failed: refused, unreachable or timed out";
    case httplib::Error::SSLConnection:
      return "TLS handshake failed (an http:// controller given as https://?)";
    case httplib::Error::SSLServerVerification:
      return "the controller's certificate is not trusted (--ca-file)";
    case httplib::Error::Read:
      return "no answer: the connection closed or the read timed out";
    case httplib::Error::Write:
      return "the request could not be written";
    default:
      return httplib::to_string(error);
  }
}

HttpReply Post(httplib::Client& client, const AgentOptions& options, const std::string& path,
               const json& body) {
  HttpReply reply;
  Result<std::string> authorization = Authorization(options);
  if (!authorization) {
    reply.error = authorization.error().message();  // status 0: retried like no answer
    return reply;
  }
  const httplib::Headers headers = {
      {"Authorization", *authorization},
      {wire::kProtocolHeader, wire::ToString(wire::kProtocolVersion)}};
  httplib::Result result =
      client.Post(path.c_str(), headers, body.dump(-1, ' ', false, json::error_handler_t::replace),
                  "application/json");
  if (!result) {
    reply.error = TransportError(result.error());
    return reply;
  }
  reply.status = result->status;
  reply.body = json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  if (reply.status == 307) reply.leader = result->get_header_value("Location");
  if (reply.status == 503 && reply.body.is_object() && reply.body.contains("leader") &&
      reply.body["leader"].is_string()) {
    reply.leader = reply.body["leader"].get<std::string>();
  }
  if (reply.status != 200) {
    reply.error =
        reply.body.is_object() && reply.body.contains("error") && reply.body["error"].is_string()
            ? reply.body["error"].get<std::string>()
            : "HTTP " + std::to_string(reply.status);
  }
  return reply;
}

// This agent process among others that may claim the same host name (issue 19): the
// controller refuses a second instance while the first holds the host's lease.
std::string NewInstanceId() {
  std::random_device random;
  const uint64_t id = (static_cast<uint64_t>(random()) << 32) ^ random();
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(id));
  return text;
}

// A steady_clock instant in the journal's unit (0: none).
int64_t MonotonicMs(std::optional<TimePoint> at) {
  if (!at) return 0;
  return std::chrono::duration_cast<std::chrono::milliseconds>(at->time_since_epoch()).count();
}

JobRunnerOptions RunnerOptions(const AgentOptions& options) {
  JobRunnerOptions runner = options.runner;
  if (runner.host.empty()) runner.host = options.host.name;
  if (!options.state_dir.empty()) {
    runner.exit_record_dir = ExitRecordDir(options.state_dir);
    runner.lease_file = LeaseFilePath(options.state_dir);  // issue 43: jobs outlive the agent
  }
  return runner;
}

// `--server` as a list (an unparsable one is tried as given: its errors show in the log).
std::vector<std::string> ServerUrls(const std::string& list) {
  Result<std::vector<std::string>> urls = wire::ParseServerList(list);
  return urls ? *urls : std::vector<std::string>{list};
}

// One HTTP client that follows the leading controller (wire/leader_follow.h). The back-off
// is short: an agent must reach a new leader well within its lease.
struct Link {
  Link(const AgentOptions& o, std::chrono::milliseconds timeout)
      : options(o),
        follower(ServerUrls(o.server), wire::FollowOptions{.max_backoff = 250ms}),
        read_timeout(timeout) {}

  httplib::Client& Client() {
    if (!client || url != follower.current()) {
      url = follower.current();
      client = MakeClient(options, url, read_timeout);
    }
    return *client;
  }
  // After an answer: true when it came from a controller that serves; one that does not
  // (standby, lapsed leader, stale epoch, gone) sends the link elsewhere, and `wait` is how
  // long to wait before the next try (zero for a served answer).
  bool Answered(const HttpReply& reply, std::chrono::milliseconds& wait) {
    if (!wire::LeaderFollower::NotServed(reply.status) && reply.status != 409) {
      follower.OnSuccess();
      wait = std::chrono::milliseconds(0);
      return true;
    }
    client.reset();
    wait = follower.OnNotServed(reply.status, reply.leader);
    return false;
  }
  // Moves to `leader` (the URL the other link found serving).
  void MoveTo(const std::string& leader) {
    if (leader.empty() || leader == follower.current()) return;
    follower.OnNotServed(307, leader);
    follower.OnSuccess();
  }

  const AgentOptions& options;
  wire::LeaderFollower follower;
  std::chrono::milliseconds read_timeout;
  std::string url;
  std::unique_ptr<httplib::Client> client;
};

}  // namespace

struct Agent::State {
  explicit State(AgentOptions o) : options(std::move(o)), runner(RunnerOptions(options)) {}

  AgentOptions options;
  std::string instance = NewInstanceId();  // the journal's, when there is one (Setup)
  std::unique_ptr<AgentJournal> journal;   // null without a state directory
  const FaultPlan faults = FaultPlan::FromEnvironment();
  // Job scripts' private copies (R-UX-1).
  ScriptFiles scripts{"", AgentInstanceName(options.host.name, options.state_dir)};
  JobTmpDirs tmpdirs{options.job_tmpdir};  // --job-tmpdir: each job's TMPDIR here
  std::mutex mu;
  std::condition_variable report_cv;
  JobRunner runner;
  uint64_t highest_epoch = 0;
  std::chrono::seconds lease{10};
  // How long jobs keep running without a controller's answer (the register reply's
  // absence_seconds; issue 44): a controller restart or failover shorter than this kills
  // nothing. Launches are not fenced by it: they come only from a controller that answered.
  std::chrono::seconds absence{10};
  std::chrono::milliseconds heartbeat{500};
  std::optional<TimePoint> last_ok_send;  // send time of the last successful request
  // Issue 43 (lease_file.h): how long its jobs outlive it; and the previous run's deadline,
  // which fences adopted jobs until the controller first answers this run.
  LeaseFile lease_file{options.state_dir.empty() ? "" : LeaseFilePath(options.state_dir)};
  std::optional<TimePoint> inherited_deadline;
  std::set<int64_t> interactive;  // jobs whose streams pass through this process
  std::string stop_message;       // set while stopping: the message of the jobs it kills
  bool restarting = false;        // stopping for a restart: said in the last heartbeat
  std::set<int64_t> left_running;  // released to the next agent: still listed as running
  bool registered = false;
  bool connected = false;  // for logging transitions only
  bool fenced = false;
  bool report_pending = false;
  bool stopping = false;
  bool set_up = false;
  // Non-zero once the controller refused the registration for good: Run stops and returns
  // it. 1: the credentials (401); 2: the controller does not let this agent serve this host
  // (403: not configured, dropped by a reload, a credential of another host or of a user),
  // which no restart changes, so the unit's RestartPreventExitStatus keeps it from a loop.
  std::atomic<int> fatal_exit{0};
  bool fatal() const { return fatal_exit != 0; }
  std::map<int64_t, wire::ExitReport> unacked_exits;
  std::map<int64_t, wire::LaunchFailure> unacked_failures;
  std::map<int64_t, PeekTarget> peek_targets;  // the output files of running jobs (R-UX-5)
  std::vector<wire::PeekResult> peek_results;  // sent with the next heartbeat
  // Job -> request sequence number current when its end was acknowledged: only a response to
  // a later request may launch it again.
  std::map<int64_t, uint64_t> acked_at_seq;
  uint64_t next_seq = 1;
  std::string last_register_error;
  int refused_status = 0;  // the last heartbeat refusal logged (0: none since a success)
  // Whether heartbeats carry the host's load: a controller older than the field refuses it
  // (400 "load: unknown field"); the agent then sends none rather than lose its lease.
  bool send_load = true;
  // Likewise for the detected GPUs in its registration (400 "gpus: unknown field").
  bool send_gpus = true;
  bool protocol_refused = false;  // the last registration's refusal was of the protocol
  // The last "cannot reach" said ("URL: error"; empty: none since an answer), and when.
  std::string unreachable_said;
  TimePoint unreachable_logged{};
  TimePoint refused_logged{};

  std::unique_ptr<Link> poll_link;
  std::unique_ptr<Link> report_link;
  // The host's health program (R-OPS-4), as the controller's replies configure it; its last
  // result goes with every registration and heartbeat. Null until Run starts it.
  std::unique_ptr<HealthChecker> health;
  std::string leader_url;  // the controller that last served (both links go there)
  std::chrono::milliseconds retry_after{0};  // set by the last answer that did not serve
  // Steps in jobs (R-LAUNCH-1): declared last, so its threads (which may take `mu`) are joined
  // before anything else goes.
  StepSessions steps{options.host.name, [this] { return StepEndpointNow(); }};

  // The STATUS= line (service_status.h). REQUIRES: mu not held.
  std::string ServiceStatus() {
    std::lock_guard lock(mu);
    return AgentStatusLine({.server = options.server,
                            .leader_url = leader_url,
                            .registered = registered,
                            .connected = connected,
                            .fenced = fenced,
                            .epoch = highest_epoch,
                            .unreachable = unreachable_said,
                            .running = runner.size()});
  }

  // Where step streams go: the serving controller (else the first of --server).
  Result<StepEndpoint> StepEndpointNow() {
    std::string url;
    {
      std::lock_guard lock(mu);
      url = leader_url;
    }
    if (url.empty()) {
      Result<std::vector<std::string>> urls = wire::ParseServerList(options.server);
      url = urls && !urls->empty() ? urls->front() : options.server;
    }
    Result<std::string> authorization = Authorization(options);
    if (!authorization) return authorization.error();
    return StepEndpoint{.url = url, .authorization = *authorization, .ca_file = options.ca_file};
  }

  // What the agent adds to every job's and step's environment: where the controller is as
  // seen from this host (for `sluice launch` inside the job).
  void AddAgentVariables(std::map<std::string, std::string>& env) const {
    env["SLUICE_SERVER"] = options.server;
    if (!options.ca_file.empty()) env["SLUICE_CA_FILE"] = options.ca_file;
  }

  // With --job-tmpdir: the job's directory here, named by TMPDIR in `env`. REQUIRES: mu held.
  Status SetTmpDir(int64_t job, const std::string& account, std::map<std::string, std::string>& env) {
    if (!tmpdirs.enabled()) return Status::Ok();
    Result<std::string> dir = tmpdirs.Prepare(job, account);
    if (!dir) return dir.error();
    env["TMPDIR"] = *dir;
    return Status::Ok();
  }

  // `url`: where the exchange went (leader_url is cleared when it fails).
  void NoteConnected(bool now_connected, const std::string& url, const std::string& error) {
    if (now_connected == connected) return;
    connected = now_connected;
    if (stopping) return;
    if (connected) {
      spdlog::info("agent {}: connected to {}", options.host.name, url);
    } else {
      spdlog::warn("agent {}: lost the controller at {}: {}", options.host.name, url, error);
    }
  }

  // Marks a successful exchange sent at `sent`; lifts a self-fence.
  void NoteSuccess(TimePoint sent) {
    if (!last_ok_send || sent > *last_ok_send) last_ok_send = sent;
    RenewLease();
    // A reply to a request sent before the lease ran out (a long poll answered after the
    // agent was stopped) does not lift the fence: the next Tick would fence again at once
    // and kill what this reply launched.
    if (fenced && Clock::now() - sent < absence) {
      fenced = false;
      spdlog::info("agent {}: controller reachable again; accepting work", options.host.name);
    }
  }

  // The lease file follows the fence deadline, before any launch of this reply (issue 43).
  // REQUIRES: mu held, last_ok_send set.
  void RenewLease() {
    if (Status s = lease_file.Renew(*last_ok_send + absence); !s.ok()) {
      spdlog::error("agent {}: LEASE FILE NOT WRITTEN: {} (its jobs outlive a restart less long)",
                    options.host.name, s.message());
    }
  }

  bool MayLaunch(int64_t job, uint64_t seq) const {
    if (runner.IsRunning(job) || unacked_exits.contains(job) || unacked_failures.contains(job)) {
      return false;
    }
    auto acked = acked_at_seq.find(job);
    return acked == acked_at_seq.end() || seq > acked->second;
  }

  // REQUIRES: mu held.
  void Apply(const wire::HeartbeatReply& reply, uint64_t seq, TimePoint now) {
    if (journal) journal->Defer();  // one sync for the acks and launches of this reply
    ApplyReply(reply, seq, now);
    if (journal) Journaled(journal->Sync());
  }

  // Starts one launch of a controller of `epoch`, or queues its failure for the next report.
  // REQUIRES: mu held.
  void StartLaunch(const wire::Launch& launch, uint64_t epoch, TimePoint now) {
    JobSpec spec = JobSpecOf(launch, options.work_dir);
    AddAgentVariables(spec.env);
    // Which leader launched this run: fault tests check that no deposed one dispatched
    // after its successor (scripts/nemesis); a job may log it beside its id.
    spec.env["SLUICE_EPOCH"] = std::to_string(epoch);
    if (journal) spec.env[kJobMarkerVariable] = JobMarker(instance, spec.job);
    Status started = spec.account.empty()
                         ? Status(StatusCode::kInvalidArgument,
                                  "the launch names no account to run the job as (a "
                                  "controller older than the agent?)")
                         : Status::Ok();
    if (started.ok() && !launch.script.empty()) started = scripts.Prepare(launch, spec);
    if (started.ok()) started = SetTmpDir(spec.job, spec.account, spec.env);
    if (started.ok()) started = scripts.PrepareHostfile(spec);  // R-LAUNCH-1
    if (started.ok() && launch.attach) {  // interactive (R-LAUNCH-3): step 0's streams
      started = steps.Attach(spec.job, launch.attach->pty, launch.attach->rows,
                             launch.attach->cols, [&](const StepStdio& stdio) -> Result<pid_t> {
                               SLUICE_RETURN_IF_ERROR(runner.Start(spec, now, &stdio));
                               return runner.Leader(spec.job);
                             });
    } else if (started.ok()) {
      started = runner.Start(spec, now);
    }
    if (started.ok()) {
      if (journal) {
        const pid_t leader = runner.Leader(spec.job);
        Journaled(journal->RecordLaunch({.job = spec.job,
                                         .epoch = highest_epoch,
                                         .pgid = leader,
                                         .start = ProcessStartTime(leader),
                                         .run = spec.run,
                                         .limit_at_ms = MonotonicMs(runner.RunLimitAt(spec.job)),
                                         .interactive = launch.attach.has_value()}));
      }
      if (launch.attach) interactive.insert(spec.job);
      peek_targets[spec.job] = PeekTargetOf(launch, spec);
      spdlog::debug("agent {}: job {} started", options.host.name, spec.job);
      return;
    }
    spdlog::warn("agent {}: job {} failed to launch: {}", options.host.name,
                 FormatJobId(spec.job),
                 started.message());
    scripts.Remove(spec.job);
    tmpdirs.Remove(spec.job);
    unacked_failures[spec.job] = {.job = spec.job,
                                  .message = BoundedText(started.message()),
                                  .host_fault = IsHostFault(started)};
    report_pending = true;
  }

  // REQUIRES: mu held.
  void ApplyReply(const wire::HeartbeatReply& reply, uint64_t seq, TimePoint now) {
    for (int64_t job : reply.ack) {
      if (unacked_exits.erase(job) + unacked_failures.erase(job) > 0) {
        acked_at_seq[job] = next_seq - 1;
      }
      if (journal) Journaled(journal->RecordAck(job));
    }
    for (const wire::Launch& launch : reply.launch) {
      // Fenced: not now (the controller sends an unconfirmed launch again).
      // Nor while stopping: the controller sends it again to the agent that comes next.
      if (!fenced && !stopping && MayLaunch(launch.job, seq)) {
        StartLaunch(launch, reply.epoch, now);
      }
    }
    for (const wire::PeekOrder& order : reply.peek) {
      auto target = peek_targets.find(order.job);
      const bool here = target != peek_targets.end() && runner.IsRunning(order.job);
      peek_results.push_back(ReadPeek(order, here ? &target->second : nullptr));
      report_pending = true;
    }
    for (wire::StepOrder order : reply.steps) {
      if (fenced) {  // nothing starts unsupervised; its client is told why
        steps.Refuse(order, "host " + options.host.name + " is cut off from the controller");
        continue;
      }
      AddAgentVariables(order.env);
      if (Status s = SetTmpDir(order.job, order.account, order.env); !s.ok()) {
        steps.Refuse(order, s.message());
        continue;
      }
      steps.Start(order, runner);
    }
    for (const wire::StepKill& kill : reply.step_kill) steps.Kill(kill, runner);
    for (const wire::KillOrder& order : reply.kill) {
      if (runner.Kill(order.job, std::chrono::seconds(order.grace_seconds), now)) {
        spdlog::info("agent {}: killing job {} (grace {} s)", options.host.name,
                     FormatJobId(order.job),
                     order.grace_seconds);
      }
    }
    for (const wire::SignalOrder& order : reply.signals) {
      const std::optional<int> number = wire::SignalNumber(order.signal);  // checked decoded
      const bool to_job = number && runner.Signal(order.job, order.run, *number);
      const bool to_steps = number && steps.Signal(order.job, *number, runner);
      if (to_job || to_steps) {
        spdlog::info("agent {}: sent SIG{} to job {}", options.host.name, order.signal,
                     FormatJobId(order.job));
      }
    }
    for (const wire::RunLimitOrder& order : reply.run_limits) {
      std::optional<std::chrono::milliseconds> limit;
      if (order.run_limit_seconds) limit = std::chrono::seconds(*order.run_limit_seconds);
      if (runner.SetRunLimit(order.job, limit)) {
        if (journal && journal->launched().contains(order.job)) {  // for a later adopter
          JournalLaunch updated = journal->launched().at(order.job);
          updated.limit_at_ms = MonotonicMs(runner.RunLimitAt(order.job));
          Journaled(journal->RecordLaunch(updated));
        }
        spdlog::info("agent {}: job {} run limit now {}", options.host.name,
                     FormatJobId(order.job),
                     order.run_limit_seconds ? std::to_string(*order.run_limit_seconds) + " s"
                                             : std::string("none"));
      }
    }
    if (report_pending) report_cv.notify_one();
  }

  // Registers (with the jobs still running, for reconciliation). Returns the HTTP status
  // (0: unreachable).
  // Sends on `link`, following the leader; REQUIRES: mu not held.
  HttpReply Send(Link& link, const std::string& path, const json& body,
                 std::chrono::milliseconds read_timeout) {
    std::string leader;
    {
      std::lock_guard lock(mu);
      leader = leader_url;
    }
    link.MoveTo(leader);
    httplib::Client& client = link.Client();
    client.set_read_timeout(read_timeout);
    HttpReply reply = Post(client, options, path, body);
    const std::string url = link.url;
    std::chrono::milliseconds wait{0};
    // Served as the follower judges it, not "no wait before the next try": the first miss of
    // a round is retried elsewhere at once, and taking it for the leader sent the agent back
    // to a lapsed leader or a standby for ever (issue 44). A 409 (stale epoch, or the host
    // taken by another instance) with no wait is taken as before.
    const bool served =
        link.Answered(reply, wait) || (reply.status == 409 && wait.count() == 0);
    std::lock_guard lock(mu);
    NoteReachable(url, reply);
    if (served) {
      if (leader_url != url && !leader_url.empty()) {
        spdlog::info("agent {}: following the leader to {}", options.host.name, url);
      }
      leader_url = url;
    } else {
      if (leader_url == url) leader_url.clear();  // the other link must not go back there
      retry_after = wait;
      if (reply.status == 0 || reply.status == 409) reply.status = 0;  // try elsewhere
    }
    return reply;
  }

  // Why a controller cannot be reached (refused, TLS, timeout), said at once and then every
  // 30 s while the same failure lasts (issue 47.10: an agent said nothing for as long as it
  // could not connect); its end is said too. REQUIRES: mu held.
  void NoteReachable(const std::string& url, const HttpReply& reply) {
    if (reply.status != 0 || reply.error.empty()) {
      if (!unreachable_said.empty() && reply.status != 0) {
        spdlog::info("agent {}: {} answers again", options.host.name, url);
        unreachable_said.clear();
      }
      return;
    }
    const std::string said = url + ": " + reply.error;
    const TimePoint now = Clock::now();
    if (said == unreachable_said && now - unreachable_logged < 30s) return;
    unreachable_said = said;
    unreachable_logged = now;
    spdlog::warn("agent {}: cannot reach the controller at {} ({}); retrying", options.host.name,
                 url, reply.error);
  }

  // A controller of an older epoch answered (a deposed leader that does not know it yet):
  // its answer is ignored and the link looks elsewhere. REQUIRES: mu held.
  int Stale(Link& link) {
    spdlog::warn("agent {}: {} answers for an older epoch than {}: ignored", options.host.name,
                 link.url, highest_epoch);
    if (leader_url == link.url) leader_url.clear();
    link.client.reset();
    retry_after = link.follower.OnNotServed(409, "");
    return 409;
  }

  int Register(Link& link) {
    json body;
    {
      std::lock_guard lock(mu);
      const std::vector<int64_t> running = runner.Running();
      std::set<int64_t> held(running.begin(), running.end());
      // A job whose exit is not acknowledged yet is still this agent's: listed, the
      // controller waits for its report instead of requeueing it (it must not run twice).
      for (const auto& [job, report] : unacked_exits) held.insert(job);
      body = wire::EncodeRegister({.host = options.host,
                                   .running = std::move(held),
                                   .epoch = highest_epoch,
                                   .instance = instance,
                                   .gpus = send_gpus ? options.gpus : std::nullopt,
                                   .health = health ? health->Last() : std::nullopt});
    }
    const TimePoint sent = Clock::now();
    HttpReply reply = Send(link, "/v1/agents/register", body, link.read_timeout);
    std::lock_guard lock(mu);
    NoteConnected(reply.status != 0, link.url, reply.error);
    if (reply.status == 400 && body.contains("gpus") && reply.error.starts_with("gpus")) {
      send_gpus = false;
      spdlog::warn("agent {}: the controller does not take detected GPUs ({}); registering "
                   "without them",
                   options.host.name, reply.error);
      return 500;  // tried again, without them
    }
    // A controller that does not serve this agent's protocol (R-OPS-5) serves it only once
    // another release runs there: tried again every kProtocolRetry, not at once.
    protocol_refused = reply.status == 400 && wire::IsProtocolRefusal(reply.body);
    if (reply.status != 200) {
      // Once per distinct refusal, not per retry (R-SRV-6).
      if (reply.status != 0 && !wire::LeaderFollower::NotServed(reply.status) &&
          reply.error != last_register_error) {
        spdlog::error("agent {}: registration refused: {}", options.host.name, reply.error);
      }
      last_register_error = reply.error;
      return reply.status;
    }
    Result<wire::RegisterReply> parsed = wire::DecodeRegisterReply(reply.body);
    if (!parsed) {
      spdlog::error("agent {}: bad register response: {}", options.host.name,
                    parsed.error().message());
      return 500;
    }
    if (parsed->epoch < highest_epoch) return Stale(link);  // an older controller: ignore it
    highest_epoch = parsed->epoch;
    lease = std::chrono::seconds(parsed->lease_seconds);
    absence = std::chrono::seconds(std::max(parsed->absence_seconds, parsed->lease_seconds));
    heartbeat = std::chrono::milliseconds(parsed->heartbeat_ms);
    if (health) health->Configure(parsed->health_check);
    registered = true;
    last_register_error.clear();
    NoteSuccess(sent);
    spdlog::info("agent {}: registered (epoch {}, lease {} s)", options.host.name, highest_epoch,
                 parsed->lease_seconds);
    return 200;
  }

  // One heartbeat exchange. Returns the HTTP status (0: unreachable).
  int Exchange(Link& link, std::chrono::milliseconds wait) {
    wire::HeartbeatRequest heartbeat_body{.wait_ms = wait.count()};
    uint64_t seq = 0;
    {
      std::lock_guard lock(mu);
      heartbeat_body.epoch = highest_epoch;
      heartbeat_body.instance = instance;
      heartbeat_body.restarting = restarting;
      const std::vector<int64_t> running = runner.Running();
      heartbeat_body.running = {running.begin(), running.end()};
      heartbeat_body.running.insert(left_running.begin(), left_running.end());
      // Within the body limit whatever the jobs did (report_budget.h); the rest goes next.
      if (FillReports(unacked_exits, unacked_failures, kMaxReportBytes, heartbeat_body) > 0) {
        report_pending = true;
        report_cv.notify_one();
      }
      heartbeat_body.peeks = std::exchange(peek_results, {});
      if (send_load) heartbeat_body.load = ReadHostLoad();
      if (health) heartbeat_body.health = health->Last();
      seq = next_seq++;
    }
    const TimePoint sent = Clock::now();
    // The read timeout follows the long poll: a paused controller is left within seconds.
    HttpReply reply = Send(link, "/v1/agents/" + options.host.name + "/heartbeat",
                           wire::EncodeHeartbeat(heartbeat_body), wait + 2s);
    std::lock_guard lock(mu);
    NoteConnected(reply.status != 0, link.url, reply.error);
    // 404: the controller does not know this agent (restarted); 409: another instance took
    // the host after this one's lease expired. Either way: register again.
    if (reply.status == 404 || reply.status == 409) registered = false;
    if (reply.status == 400 && heartbeat_body.load && reply.error.starts_with("load")) {
      send_load = false;
      spdlog::warn("agent {}: the controller does not take the host's load ({}); sending none",
                   options.host.name, reply.error);
      return 500;  // retried at once, without it
    }
    if (reply.status != 200) {
      NoteRefused(reply, heartbeat_body);
      return reply.status;
    }
    refused_status = 0;
    Result<wire::HeartbeatReply> parsed = wire::DecodeHeartbeatReply(reply.body);
    if (!parsed) {
      spdlog::error("agent {}: bad heartbeat response: {}", options.host.name,
                    parsed.error().message());
      return 500;
    }
    if (parsed->epoch < highest_epoch) return Stale(link);  // fencing: a stale controller
    highest_epoch = parsed->epoch;
    NoteSuccess(sent);
    if (health && parsed->health_check) health->Configure(*parsed->health_check);
    Apply(*parsed, seq, Clock::now());
    return 200;
  }

  // A heartbeat the controller refused (other than "register first") means exits and launch
  // failures cannot reach it: said at error level when it starts and every 30 s while it
  // lasts (R-SRV-6: not one line per retry). REQUIRES: mu held.
  void NoteRefused(const HttpReply& reply, const wire::HeartbeatRequest& sent) {
    if (reply.status < 400 || reply.status == 404 || stopping) return;
    const TimePoint now = Clock::now();
    if (reply.status == refused_status && now - refused_logged < 30s) return;
    refused_status = reply.status;
    refused_logged = now;
    spdlog::error(
        "agent {}: HEARTBEAT REFUSED by the controller (HTTP {}): {}; {} exit report(s) "
        "and {} launch failure(s) wait, {} byte(s) sent; the host loses its lease if "
        "this lasts",
        options.host.name, reply.status, reply.error, unacked_exits.size(), unacked_failures.size(),
        wire::EncodeHeartbeat(sent).dump(-1, ' ', false, json::error_handler_t::replace).size());
  }

  void PollLoop() {
    auto backoff = 100ms;
    while (true) {
      {
        std::lock_guard lock(mu);
        if (stopping) return;
      }
      int status = 0;
      bool need_register = false;
      std::chrono::milliseconds wait;
      {
        std::lock_guard lock(mu);
        need_register = !registered;
        wait = heartbeat;
      }
      status = need_register ? Register(*poll_link) : Exchange(*poll_link, wait);
      if (need_register && (status == 401 || status == 403)) {
        fatal_exit = status == 403 ? 2 : 1;
        return;
      }
      if (status == 200) {
        backoff = 100ms;
        continue;
      }
      std::unique_lock lock(mu);
      if (std::exchange(protocol_refused, false)) {
        report_cv.wait_for(lock, kProtocolRetry, [this] { return stopping; });
        continue;
      }
      if (wire::LeaderFollower::NotServed(status) || status == 409) {
        // Another controller may lead: the follower chose where and how long to wait.
        report_cv.wait_for(lock, std::exchange(retry_after, 0ms), [this] { return stopping; });
        continue;
      }
      report_cv.wait_for(lock, backoff, [this] { return stopping; });
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, 1000ms);
    }
  }

  void ReportLoop() {
    while (true) {
      {
        std::unique_lock lock(mu);
        report_cv.wait(lock, [this] { return stopping || (report_pending && registered); });
        if (stopping) return;
        report_pending = false;
      }
      Exchange(*report_link, 0ms);
    }
  }

  // A journal write that failed (a full disk): said loudly, the agent goes on (the exit is
  // still reported while it runs; only a crash before the report could repeat the job).
  void Journaled(const Status& written) {
    if (!written.ok()) {
      spdlog::error("agent {}: JOURNAL WRITE FAILED: {}", options.host.name, written.message());
    }
  }

  // Reaps ended jobs into the exits to report (journaled first); returns the last one's id
  // (0: none). REQUIRES: mu held.
  int64_t Reap(TimePoint now) {
    if (journal) journal->Defer();  // one sync for the exits of this pass
    int64_t last_exit = ReapExits(now);
    if (journal) Journaled(journal->Sync());
    return last_exit;
  }

  // REQUIRES: mu held.
  int64_t ReapExits(TimePoint now) {
    int64_t last_exit = 0;
    for (const JobExit& exit : runner.Poll(now, options.run_limit_grace)) {
      spdlog::debug("agent {}: job {} ended ({})", options.host.name, exit.job,
                    ToString(exit.cause));
      scripts.Remove(exit.job);
      tmpdirs.Remove(exit.job);
      peek_targets.erase(exit.job);
      interactive.erase(exit.job);
      unacked_exits[exit.job] = ExitReportOf(exit);
      if (!stop_message.empty() && exit.cause == ExitCause::kKilled && exit.message.empty()) {
        unacked_exits[exit.job].message = stop_message;
      }
      steps.JobEnded(exit.job, StepExitOf(exit));  // an interactive job's
      report_pending = true;
      if (journal) {
        Journaled(journal->RecordExit(unacked_exits[exit.job]));
      }
      last_exit = exit.job;
    }
    return last_exit;
  }

  // The agent stops (issue 43). Returns true when batch jobs are left to their shepherds for
  // the next agent (a restart: the default with a state directory); interactive jobs and
  // steps, whose streams pass through this process, end with it. Otherwise (no state
  // directory, --kill-jobs-on-stop, fatal()) every job is killed, its exit saying why.
  bool StopJobs(bool fatal_stop) {
    const bool restart = !options.state_dir.empty() && !options.kill_jobs_on_stop && !fatal_stop;
    std::vector<int64_t> ending;
    {
      std::lock_guard lock(mu);
      const TimePoint now = Clock::now();
      if (restart) {
        stop_message = "the agent of host " + options.host.name +
                       " stopped: interactive jobs and steps end with it (batch jobs survive "
                       "a restart)";
        ending.assign(interactive.begin(), interactive.end());
        for (int64_t job : ending) runner.Kill(job, options.fence_grace, now);
      } else {
        stop_message = "the agent of host " + options.host.name + " stopped" +
                       (options.kill_jobs_on_stop ? " (--kill-jobs-on-stop)" : "") +
                       " and killed its jobs";
        ending = runner.Running();
        runner.KillAll(options.fence_grace, now);
      }
      steps.KillAll(runner);
      if (options.notifier != nullptr && !fatal_stop) {
        options.notifier->Stopping(
            restart ? fmt::format("stopping for a restart: {} job(s) keep running",
                                  runner.size() - ending.size())
                    : fmt::format("stopping: ending {} jobs", ending.size()));
      }
    }
    const TimePoint deadline = Clock::now() + options.fence_grace + 5s;
    while (Clock::now() < deadline) {
      Tick(Clock::now());
      std::lock_guard lock(mu);
      if (std::none_of(ending.begin(), ending.end(),
                       [this](int64_t job) { return runner.IsRunning(job); })) {
        break;
      }
    }
    if (!restart) return false;
    std::lock_guard lock(mu);
    const std::vector<int64_t> left = runner.Release();
    left_running = {left.begin(), left.end()};
    restarting = true;
    const std::optional<TimePoint>& until = lease_file.written();
    const int64_t seconds =
        until ? std::chrono::duration_cast<std::chrono::seconds>(*until - Clock::now()).count() : 0;
    spdlog::info(
        "agent {}: stopping for a restart (SIGTERM): {} job(s) keep running under their "
        "shepherds for the next agent to adopt within {} s (the lease); --kill-jobs-on-stop "
        "ends them instead",
        options.host.name, left.size(), std::max<int64_t>(seconds, 0));
    return true;
  }

  // One tick of the main loop: reap, enforce deadlines, check the lease.
  void Tick(TimePoint now) {
    std::lock_guard lock(mu);
    const int64_t last_exit = Reap(now);
    if (last_exit != 0 && journal && FaultFires(faults.crash_after_exit_journaled)) {
      // A test's fault: the crash comes 20 ms later (the lock held, so nothing is reported
      // meanwhile), not at the instant of an exit, when jobs started together often end too.
      const TimePoint crash_at = Clock::now() + 20ms;
      while (Clock::now() < crash_at) {
        Reap(Clock::now());
        std::this_thread::sleep_for(1ms);
      }
      Reap(Clock::now());
      CrashNow("after journaling the exit of job " + std::to_string(last_exit));
    }
    // Before this run's first answer, adopted jobs run under the previous run's lease.
    const bool lease_out = last_ok_send ? now - *last_ok_send >= absence
                                        : inherited_deadline && now >= *inherited_deadline;
    if (lease_out && !fenced) {
      fenced = true;
      spdlog::warn(
          "agent {}: no controller response for {} s (the absence it allows): killing {} "
          "job(s); the controller requeues them once it hears nothing for that long plus its "
          "grace",
          options.host.name, absence.count(), runner.size());
      runner.KillAll(options.fence_grace, now, ExitCause::kFenced);
      steps.KillAll(runner);
    }
    for (int64_t job : steps.Reap()) {
      // A host where only steps of the job ran: its directory goes with the last of them.
      if (!runner.IsRunning(job) && !steps.HasJob(job)) tmpdirs.Remove(job);
    }
    tmpdirs.Reap();
    if (report_pending) report_cv.notify_one();
  }
};

Agent::Agent(AgentOptions options) : state_(std::make_unique<State>(std::move(options))) {}
Agent::~Agent() = default;

Status Agent::Setup() {
  State& s = *state_;
  std::lock_guard lock(s.mu);
  if (s.set_up) return Status::Ok();
  const std::string& host = s.options.host.name;
  // Before registering: leftovers, unreported exits; and before the runner's setup removes the
  // stale cgroups, which would kill a shepherd still recording its job's end.
  if (!s.options.state_dir.empty()) {
    // Issue 43: the jobs its previous run's shepherds still run within that run's lease are
    // adopted, and stay fenced by that lease until the controller answers this run.
    const TimePoint now = Clock::now();
    Result<std::unique_ptr<AgentJournal>> journal = RecoverAgentState(
        s.options.state_dir, host, s.instance, [&s, now](const JournalLaunch& launch) {
          std::optional<TimePoint> limit_at;
          if (launch.limit_at_ms != 0) {
            limit_at = TimePoint(std::chrono::milliseconds(launch.limit_at_ms));
          }
          return s.runner.Adopt({.job = launch.job,
                                 .run = launch.run,
                                 .shepherd = launch.pgid,
                                 .start = launch.start,
                                 .now = now,
                                 .limit_at = limit_at});
        });
    if (!journal) {
      return Status(journal.error().code(),
                    "--state-dir " + s.options.state_dir + ": " + journal.error().message());
    }
    s.journal = std::move(*journal);
    // The moment a leader's exit is seen (before the rest of its job is killed and reaped,
    // which may take a while with a cgroup freeze): a crash then must not make it run again.
    s.runner.OnLeaderExit(
        [&s](const JobExit& exit) { s.Journaled(s.journal->RecordExit(ExitReportOf(exit))); });
    s.unacked_exits = s.journal->exits();
    s.report_pending = !s.unacked_exits.empty();
    if (s.runner.size() > 0) s.inherited_deadline = s.lease_file.Inherit();
  }
  SLUICE_RETURN_IF_ERROR(s.runner.Setup());
  if (Status base = s.tmpdirs.EnsureBase(); !base.ok()) {
    return Status(base.code(), "--job-tmpdir: " + base.message());
  }
  // A previous run's directories whose jobs have ended since (the adopted ones stay).
  s.tmpdirs.RemoveStale([&s](int64_t job) { return s.runner.IsRunning(job); });
  s.set_up = true;
  if (!s.runner.warning().empty()) {
    spdlog::warn("agent {}: {}", host, s.runner.warning());
  } else {
    std::string dirs;
    for (const std::string& dir : s.runner.CgroupDirs()) dirs += (dirs.empty() ? "" : ", ") + dir;
    spdlog::info("agent {}: jobs run in cgroups ({}) under {}", host,
                 ToString(s.runner.containment()), dirs);
  }
  return Status::Ok();
}

int Agent::Run(const std::atomic<bool>& stop) {
  State& s = *state_;
  if (Status set_up = Setup(); !set_up.ok()) {
    spdlog::error("agent {}: containment: {}", s.options.host.name, set_up.message());
    return 2;
  }
  s.poll_link = std::make_unique<Link>(s.options, 12s);  // wait_ms is at most 10 s
  s.report_link = std::make_unique<Link>(s.options, 3s);
  // SIGCHLD wakes the main loop at once (blocked here and in the threads started below, it
  // stays pending for sigtimedwait; jobs get an empty mask): an ended job is reaped and
  // journaled within a millisecond or so, which is how long a crash of the agent could make
  // it run again.
  sigset_t child_exits;
  sigemptyset(&child_exits);
  sigaddset(&child_exits, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &child_exits, nullptr);
  // A changed health result goes to the controller at once, by the report thread.
  s.health =
      std::make_unique<HealthChecker>(s.options.host.name, [&s](const wire::HealthReport& r) {
        if (r.ok) {
          spdlog::info("agent {}: health check passes", s.options.host.name);
        } else {
          spdlog::warn("agent {}: health check failed: {}", s.options.host.name, r.message);
        }
        std::lock_guard lock(s.mu);
        s.report_pending = true;
        s.report_cv.notify_one();
      });
  std::thread poller([&s] { s.PollLoop(); });
  std::thread reporter([&s] { s.ReportLoop(); });
  daemon::ServiceNotifier* notifier = s.options.notifier;
  if (notifier != nullptr) notifier->Ready(s.ServiceStatus());
  TimePoint status_at = Clock::now();
  while (!stop && !s.fatal()) {
    // This loop must stay alive: it reaps, fences and enforces limits (R-OPS-2).
    if (notifier != nullptr) notifier->KeepAlive();
    s.Tick(Clock::now());
    if (notifier != nullptr && Clock::now() - status_at >= 1s) {
      notifier->Status(s.ServiceStatus());
      status_at = Clock::now();
    }
    const auto tick = std::chrono::duration_cast<std::chrono::nanoseconds>(s.options.tick);
    const timespec wait{.tv_sec = static_cast<time_t>(tick.count() / 1'000'000'000),
                        .tv_nsec = static_cast<long>(tick.count() % 1'000'000'000)};
    sigtimedwait(&child_exits, nullptr, &wait);  // a job ended, the tick passed, or a signal
  }
  // Shutdown: end the jobs that do not outlive the agent (their exits are reported once, best
  // effort), then the threads.
  const bool restart = s.StopJobs(s.fatal());
  {
    std::lock_guard lock(s.mu);
    s.stopping = true;
  }
  s.report_cv.notify_all();
  if (s.poll_link->client) s.poll_link->client->stop();
  poller.join();
  reporter.join();
  s.health.reset();  // waits for a run in progress, at most its timeout
  if (!s.fatal()) {
    bool registered = false;
    {
      std::lock_guard lock(s.mu);
      registered =
          s.registered && (restart || !(s.unacked_exits.empty() && s.unacked_failures.empty()));
    }
    if (registered) s.Exchange(*s.report_link, 0ms);
  }
  return s.fatal_exit;
}

}  // namespace sluice::agent
