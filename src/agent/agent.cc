#include "agent/agent.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "agent/report_budget.h"

namespace sluice::agent {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

struct HttpReply {
  int status = 0;  // 0: no response (connection failed or timed out)
  json body;
  std::string error;  // transport error or the server's {"error": ...}
};

std::unique_ptr<httplib::Client> MakeClient(const AgentOptions& options,
                                            std::chrono::milliseconds read_timeout) {
  auto client = std::make_unique<httplib::Client>(options.server);
  client->set_bearer_token_auth(options.token.c_str());
  client->set_connection_timeout(1s);
  client->set_read_timeout(read_timeout);
  client->set_write_timeout(2s);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);  // a POST's body must not wait for the server's delayed ACK
  return client;
}

HttpReply Post(httplib::Client& client, const std::string& path, const json& body) {
  HttpReply reply;
  httplib::Result result = client.Post(
      path.c_str(), body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  if (!result) {
    reply.error = httplib::to_string(result.error());
    return reply;
  }
  reply.status = result->status;
  reply.body = json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  if (reply.status != 200) {
    reply.error = reply.body.is_object() && reply.body.contains("error") &&
                          reply.body["error"].is_string()
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

}  // namespace

struct Agent::State {
  explicit State(AgentOptions o) : options(std::move(o)) {}

  AgentOptions options;
  const std::string instance = NewInstanceId();
  std::mutex mu;
  std::condition_variable report_cv;
  JobRunner runner;
  uint64_t highest_epoch = 0;
  std::chrono::seconds lease{10};
  std::chrono::milliseconds heartbeat{500};
  std::optional<TimePoint> last_ok_send;  // send time of the last successful request
  bool registered = false;
  bool connected = false;  // for logging transitions only
  bool fenced = false;
  bool report_pending = false;
  bool stopping = false;
  std::atomic<bool> fatal{false};
  std::map<int64_t, wire::ExitReport> unacked_exits;
  std::map<int64_t, wire::LaunchFailure> unacked_failures;
  // Job -> request sequence number current when its end was acknowledged: only a response to
  // a later request may launch it again.
  std::map<int64_t, uint64_t> acked_at_seq;
  uint64_t next_seq = 1;
  std::string last_register_error;
  int refused_status = 0;  // the last heartbeat refusal logged (0: none since a success)
  TimePoint refused_logged{};

  std::unique_ptr<httplib::Client> poll_client;
  std::unique_ptr<httplib::Client> report_client;

  void NoteConnected(bool now_connected, const std::string& error) {
    if (now_connected == connected) return;
    connected = now_connected;
    if (stopping) return;
    if (connected) {
      spdlog::info("agent {}: connected to {}", options.host.name, options.server);
    } else {
      spdlog::warn("agent {}: lost the controller at {}: {}", options.host.name, options.server,
                   error);
    }
  }

  // Marks a successful exchange sent at `sent`; lifts a self-fence.
  void NoteSuccess(TimePoint sent) {
    if (!last_ok_send || sent > *last_ok_send) last_ok_send = sent;
    if (fenced) {
      fenced = false;
      spdlog::info("agent {}: controller reachable again; accepting work", options.host.name);
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
    for (int64_t job : reply.ack) {
      if (unacked_exits.erase(job) + unacked_failures.erase(job) > 0) {
        acked_at_seq[job] = next_seq - 1;
      }
    }
    for (const wire::Launch& launch : reply.launch) {
      if (!MayLaunch(launch.job, seq)) continue;
      const JobSpec spec = JobSpecOf(launch, options.work_dir);
      Status started = runner.Start(spec, now);
      if (started.ok()) {
        spdlog::debug("agent {}: job {} started", options.host.name, spec.job);
        continue;
      }
      spdlog::warn("agent {}: job {} failed to launch: {}", options.host.name, spec.job,
                   started.message());
      unacked_failures[spec.job] = {.job = spec.job, .message = BoundedText(started.message())};
      report_pending = true;
    }
    for (const wire::KillOrder& order : reply.kill) {
      if (runner.Kill(order.job, std::chrono::seconds(order.grace_seconds), now)) {
        spdlog::info("agent {}: killing job {} (grace {} s)", options.host.name, order.job,
                     order.grace_seconds);
      }
    }
    if (report_pending) report_cv.notify_one();
  }

  // Registers (with the jobs still running, for reconciliation). Returns the HTTP status
  // (0: unreachable).
  int Register(httplib::Client& client) {
    json body;
    {
      std::lock_guard lock(mu);
      const std::vector<int64_t> running = runner.Running();
      body = wire::EncodeRegister({.host = options.host,
                                   .running = {running.begin(), running.end()},
                                   .epoch = highest_epoch,
                                   .instance = instance});
    }
    const TimePoint sent = Clock::now();
    HttpReply reply = Post(client, "/v1/agents/register", body);
    std::lock_guard lock(mu);
    NoteConnected(reply.status != 0, reply.error);
    if (reply.status != 200) {
      // Once per distinct refusal, not per retry (R-SRV-6).
      if (reply.status != 0 && reply.error != last_register_error) {
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
    if (parsed->epoch < highest_epoch) return 409;  // an older controller: ignore it
    highest_epoch = parsed->epoch;
    lease = std::chrono::seconds(parsed->lease_seconds);
    heartbeat = std::chrono::milliseconds(parsed->heartbeat_ms);
    registered = true;
    last_register_error.clear();
    NoteSuccess(sent);
    spdlog::info("agent {}: registered (epoch {}, lease {} s)", options.host.name, highest_epoch,
                 parsed->lease_seconds);
    return 200;
  }

  // One heartbeat exchange. Returns the HTTP status (0: unreachable).
  int Exchange(httplib::Client& client, std::chrono::milliseconds wait) {
    wire::HeartbeatRequest heartbeat_body{.wait_ms = wait.count()};
    uint64_t seq = 0;
    {
      std::lock_guard lock(mu);
      heartbeat_body.epoch = highest_epoch;
      heartbeat_body.instance = instance;
      const std::vector<int64_t> running = runner.Running();
      heartbeat_body.running = {running.begin(), running.end()};
      // Within the body limit whatever the jobs did (report_budget.h); the rest goes next.
      if (FillReports(unacked_exits, unacked_failures, kMaxReportBytes, heartbeat_body) > 0) {
        report_pending = true;
        report_cv.notify_one();
      }
      seq = next_seq++;
    }
    const TimePoint sent = Clock::now();
    HttpReply reply = Post(client, "/v1/agents/" + options.host.name + "/heartbeat",
                           wire::EncodeHeartbeat(heartbeat_body));
    std::lock_guard lock(mu);
    NoteConnected(reply.status != 0, reply.error);
    // 404: the controller does not know this agent (restarted); 409: another instance took
    // the host after this one's lease expired. Either way: register again.
    if (reply.status == 404 || reply.status == 409) registered = false;
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
    if (parsed->epoch < highest_epoch) return 409;  // fencing: a stale controller
    highest_epoch = parsed->epoch;
    NoteSuccess(sent);
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
      status = need_register ? Register(*poll_client) : Exchange(*poll_client, wait);
      if (need_register && (status == 401 || status == 403)) {
        fatal = true;
        return;
      }
      if (status == 200) {
        backoff = 100ms;
        continue;
      }
      std::unique_lock lock(mu);
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
      Exchange(*report_client, 0ms);
    }
  }

  // One tick of the main loop: reap, enforce deadlines, check the lease.
  void Tick(TimePoint now) {
    std::lock_guard lock(mu);
    for (const JobExit& exit : runner.Poll(now, options.run_limit_grace)) {
      spdlog::debug("agent {}: job {} ended ({})", options.host.name, exit.job,
                    ToString(exit.cause));
      unacked_exits[exit.job] = ExitReportOf(exit);
      report_pending = true;
    }
    if (last_ok_send && !fenced && now - *last_ok_send >= lease) {
      fenced = true;
      spdlog::warn("agent {}: no controller response for {} s (the lease): killing {} job(s)",
                   options.host.name, lease.count(), runner.size());
      runner.KillAll(options.fence_grace, now);
    }
    if (report_pending) report_cv.notify_one();
  }
};

Agent::Agent(AgentOptions options) : state_(std::make_unique<State>(std::move(options))) {}
Agent::~Agent() = default;

int Agent::Run(const std::atomic<bool>& stop) {
  State& s = *state_;
  s.poll_client = MakeClient(s.options, 12s);  // wait_ms is at most 10 s
  s.report_client = MakeClient(s.options, 3s);
  std::thread poller([&s] { s.PollLoop(); });
  std::thread reporter([&s] { s.ReportLoop(); });
  while (!stop && !s.fatal) {
    s.Tick(Clock::now());
    std::this_thread::sleep_for(s.options.tick);
  }
  // Shutdown: end the jobs (their exits are reported once, best effort), then the threads.
  {
    std::lock_guard lock(s.mu);
    s.runner.KillAll(s.options.fence_grace, Clock::now());
  }
  const TimePoint deadline = Clock::now() + s.options.fence_grace + 5s;
  while (Clock::now() < deadline) {
    s.Tick(Clock::now());
    std::lock_guard lock(s.mu);
    if (s.runner.size() == 0) break;
  }
  {
    std::lock_guard lock(s.mu);
    s.stopping = true;
  }
  s.report_cv.notify_all();
  s.poll_client->stop();
  poller.join();
  reporter.join();
  if (!s.fatal) {
    bool registered = false;
    {
      std::lock_guard lock(s.mu);
      registered = s.registered && !(s.unacked_exits.empty() && s.unacked_failures.empty());
    }
    if (registered) s.Exchange(*s.report_client, 0ms);
  }
  return s.fatal ? 1 : 0;
}

}  // namespace sluice::agent
