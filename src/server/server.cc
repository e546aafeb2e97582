#include "server/server.h"

#include <httplib.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "config/cluster_yaml.h"
#include "daemon/service_notifier.h"
#include "server/agent_credentials.h"
#include "server/connection_guard.h"
#include "server/dashboard_routes.h"
#include "server/ha_front.h"
#include "server/http_api.h"
#include "server/service_status.h"
#include "server/stats_sampler.h"
#include "server/text_parsers.h"

namespace sluice::server {
namespace {

// HTTP, or HTTPS when a certificate and key are given (cpp-httplib's OpenSSL support).
Result<std::unique_ptr<httplib::Server>> MakeHttpServer(const ServerOptions& options) {
  if (options.tls_cert.empty() && options.tls_key.empty()) {
    return std::make_unique<httplib::Server>();
  }
  if (options.tls_cert.empty() || options.tls_key.empty()) {
    return InvalidArgument("--tls-cert and --tls-key go together");
  }
  for (const std::string& path : {options.tls_cert, options.tls_key}) {
    if (::access(path.c_str(), R_OK) != 0) return NotFound("cannot read " + path);
  }
  auto https =
      std::make_unique<httplib::SSLServer>(options.tls_cert.c_str(), options.tls_key.c_str());
  // NOTE: OpenSSL loads a key that does not match the certificate without complaint; every
  // handshake would then fail. Check the pair here, at start.
  if (!https->is_valid() || SSL_CTX_check_private_key(https->ssl_context()) != 1) {
    return InvalidArgument("--tls-cert " + options.tls_cert + " / --tls-key " + options.tls_key +
                           ": not a PEM certificate and its matching private key");
  }
  return std::unique_ptr<httplib::Server>(std::move(https));
}

// Each connection takes two descriptors (ConnectionGuard keeps a dup): the soft limit
// (often 1024) goes up to the hard one.
void RaiseOpenFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

struct ListenAddress {
  std::string host;
  int port = 0;
};

Result<ListenAddress> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument("--listen " + listen + ": expected HOST:PORT");
  }
  const std::optional<int64_t> port = ParseInteger(std::string_view(listen).substr(colon + 1));
  if (!port || *port < 0 || *port > 65535) {
    return InvalidArgument("--listen " + listen + ": expected a port in [0, 65535]");
  }
  return ListenAddress{.host = listen.substr(0, colon), .port = static_cast<int>(*port)};
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  Result<ListenAddress> listen = ParseListen(options.listen);
  if (!listen) return listen.error();
  const std::string& host = listen->host;
  Result<std::unique_ptr<httplib::Server>> made = MakeHttpServer(options);
  if (!made) return made.error();
  RaiseOpenFileLimit();
  config::AuthConfig auth;
  Result<core::ClusterConfig> config = config::LoadClusterConfig(options.config_path, &auth);
  if (!config) return config.error();
  if (!options.clock) {
    options.clock = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
  options.controller.config_path = options.config_path;
  std::unique_ptr<Server> server(new Server());
  server->notifier_ = options.notifier;
  server->http_ = std::move(*made);
  server->port_ = server->Bind(host, listen->port);
  if (server->port_ <= 0) {
    return Status(StatusCode::kUnavailable, "cannot listen on " + options.listen);
  }
  server->url_ = !options.advertise.empty() ? options.advertise
                                            : (options.tls_cert.empty() ? "http://" : "https://") +
                                                  host + ":" + std::to_string(server->port_);
  const std::string store_url = options.store_url.empty() ? options.state_dir : options.store_url;
  const bool standby = store_url.starts_with("etcd://");
  server->standby_ = standby;
  Result<std::unique_ptr<store::Store>> store = store::Store::OpenUrl(
      store_url, {.candidate = server->url_, .lease_seconds = options.leader_lease_seconds});
  if (!store) return store.error();
  server->store_ = std::move(*store);
  Result<std::unique_ptr<Controller>> controller =
      Controller::Create(ControllerDeps{.config = std::move(*config),
                                        .auth = std::move(auth),
                                        .store = server->store_.get(),
                                        .options = options.controller,
                                        .standby = standby,
                                        .clock = options.clock,
                                        .log = options.log,
                                        .notifier = options.notifier});
  if (!controller) return controller.error();
  server->controller_ = std::move(*controller);
  server->front_ = std::make_unique<HaFront>(
      *server->store_, server->url_,
      [c = server->controller_.get()](const std::string& authorization,
                                      const std::string& agent_host) {
        Result<Caller> caller = c->AuthenticateRequest(authorization);
        return caller && caller->agent && CheckAgentHost(*caller, agent_host).ok();
      });
  server->InstallRoutes(options);
  if (standby) {
    Controller* c = server->controller_.get();
    const bool exit_when_deposed = options.exit_when_deposed;
    daemon::ServiceNotifier* notifier = options.notifier;
    server->store_->SetDeposedCallback([c, exit_when_deposed, notifier](const Status& why) {
      c->StepDown(why);
      if (!exit_when_deposed) return;
      if (notifier != nullptr) {
        notifier->Stopping("deposed (" + why.message() + "): exiting to restart as a standby");
      }
      std::_Exit(0);
    });
    server->campaigner_ = std::thread(
        [s = server.get(), exit_when_deposed, lease_ms = options.controller.lease_ms] {
          s->Campaign(exit_when_deposed, lease_ms);
        });
  } else {
    server->front_->Lead(server->controller_.get());
    server->controller_->Start();
  }
  httplib::Server* http = server->http_.get();
  server->listener_ = std::thread([http] { http->listen_after_bind(); });
  // Serving means accepting: READY=1 (R-OPS-2) follows this return. Bounded: the thread
  // only has to start.
  for (int i = 0; i < 5000 && !http->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return server;
}

std::string Server::ServiceStatus() {
  ServiceFacts facts;
  if (standby_ && !front_->leading()) {
    facts.role = "standby";
    const std::optional<std::string> leader = store_->leader();
    if (leader && *leader != url_) facts.leader = leader;
    return ServiceStatusLine(facts);
  }
  const store::Role role = store_->role();
  facts.role = !standby_
                   ? "serving"
                   : (role == store::Role::kLeader ? "leader" : std::string(store::ToString(role)));
  facts.epoch = controller_->epoch();
  StatsSample sample;
  controller_->SampleStats(sample, /*with_counts=*/false);
  facts.hosts = sample.hosts;
  facts.hosts_ok = sample.hosts_ok;
  facts.running = sample.running;
  facts.pending = sample.pending;
  facts.held = sample.held;
  return ServiceStatusLine(facts);
}

void Server::InstallRoutes(const ServerOptions& options) {
  api_ = std::make_unique<HttpApi>(
      *controller_, [front = front_.get()](const httplib::Request& req, httplib::Response& res) {
        return front->Answer(req, res);
      });
  api_->Install(*http_);
  stats_ = std::make_unique<StatsSampler>(
      *controller_, StatsOptions{.interval_seconds = options.stats_interval_seconds});
  InstallUiRoutes(*http_);  // the dashboard (dashboard_routes.h, R-UI-1)
  InstallStatsRoutes(*http_, *controller_, *stats_);
  stats_->Start();
  guard_ = std::make_unique<ConnectionGuard>(options.connections,
                                             options.log ? options.log : spdlog::default_logger());
  guard_->Attach(*http_);
  guard_->Watch(port_);
}

int Server::Bind(const std::string& host, int port) {
  // A reply goes out in two writes (headers, body); with Nagle's algorithm the body waits
  // for the client's delayed ACK (~40 ms) on a keep-alive connection.
  http_->set_tcp_nodelay(true);
  if (port == 0) return http_->bind_to_any_port(host);
  return http_->bind_to_port(host, port) ? port : -1;
}

// Steps: 1. wait for the store's lead (in slices, so that Stop is not held up); 2. restore
// (a failed Load, e.g. the quorum went, is retried: nothing was restored yet); 3. answer and
// schedule.
void Server::Campaign(bool exit_when_deposed, int64_t agent_lease_ms) {
  auto log = spdlog::default_logger();
  log->info("{}: standby, campaigning for the lead on {}", url_, store_->dir());
  // A standby's loop that must stay alive is this one, until the scheduling thread starts.
  const std::chrono::milliseconds slice = std::min<std::chrono::milliseconds>(
      std::chrono::milliseconds(500),
      notifier_ ? notifier_->KeepAliveEvery() : std::chrono::milliseconds(500));
  while (!stopping_) {
    if (notifier_ != nullptr) notifier_->KeepAlive();
    Status led = store_->AwaitLeadership(slice);
    if (led.code() == StatusCode::kUnavailable) {
      // Agents cut off from the leader come here between their tries of it, each a long poll
      // that times out: count them over 10 s at least.
      store_->PublishAgentsHeard(front_->AgentsHeardWithin(
          std::chrono::milliseconds(std::max<int64_t>(agent_lease_ms, 10'000))));
      continue;
    }
    if (!led.ok()) {
      log->critical("{}: cannot lead: {}", url_, led.message());
      if (exit_when_deposed) std::_Exit(0);
      return;
    }
    log->info("{}: leading at epoch {}; restoring", url_, store_->epoch());
    Status taken = controller_->TakeOver();
    if (taken.code() == StatusCode::kUnavailable) {
      log->error("{}: restore failed: {}; retrying", url_, taken.message());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if (!taken.ok()) {
      log->critical("{}: restore failed: {}", url_, taken.message());
      log->flush();
      std::_Exit(1);
    }
    front_->Lead(controller_.get());
    controller_->Start();
    if (notifier_ != nullptr) notifier_->Status(ServiceStatus());
    WatchAgentsReach(agent_lease_ms);
    return;
  }
}

bool Server::SleepUnlessStopping(std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!stopping_ && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(100), until - std::chrono::steady_clock::now()));
  }
  return !stopping_;
}

// Issue 44: a leader cut off from its agents only kept its lease, the standby sent the agents
// that reached it back to the leader, and nothing was dispatched for the whole partition.
// Rule: checked every quarter lease (at most 1 s); once this controller has led for two agent
// leases (its agents have registered), a standby that heard strictly more agents within the
// lease than this controller has, for a whole lease, gets the lead: this one resigns
// (revokes its election lease; deposed, it steps down and exits to be restarted as a standby).
// A rival that hears no more than this controller (a whole-cluster agent outage, an agent cut
// off from the leader only) changes nothing.
void Server::WatchAgentsReach(int64_t agent_lease_ms) {
  using Clock = std::chrono::steady_clock;
  const std::chrono::milliseconds lease(agent_lease_ms);
  const std::chrono::milliseconds every(std::clamp<int64_t>(agent_lease_ms / 4, 100, 1000));
  const Clock::time_point led_since = Clock::now();
  std::optional<Clock::time_point> behind_since;
  while (SleepUnlessStopping(every)) {
    const store::Role role = store_->role();
    if (role == store::Role::kDeposed) return;  // the deposed callback acts
    if (role != store::Role::kLeader) {         // a lapse (no quorum?): nothing to compare
      behind_since.reset();
      continue;
    }
    const std::vector<int> rivals = store_->RivalsAgentsHeard();
    const int64_t mine = controller_->ConnectedAgents();
    const int64_t best = rivals.empty() ? 0 : *std::max_element(rivals.begin(), rivals.end());
    const Clock::time_point now = Clock::now();
    if (best <= mine || now - led_since < 2 * lease) {
      behind_since.reset();
      continue;
    }
    if (!behind_since) behind_since = now;
    // One lease: the hosts it stopped hearing are then silent for two leases, well before their
    // absence + grace would have them lost (and their jobs requeued) by a leader that cannot
    // reach them (docs/ha.md: keep the absence above three leases).
    if (now - *behind_since < lease) continue;
    store_->Resign(Status(
        StatusCode::kUnavailable,
        fmt::format("a standby heard {} agents within their lease, this leader {}, for {} s: "
                    "giving the lead to it",
                    best, mine, std::chrono::duration_cast<std::chrono::seconds>(lease).count())));
    return;
  }
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  if (campaigner_.joinable()) campaigner_.join();
  if (!listener_.joinable()) return;  // Start failed before serving: nothing runs
  api_->Shutdown();
  stats_->Stop();
  controller_->Stop();  // ends long polls and the scheduling thread
  // stop() before the listener thread has entered its accept loop would be lost and the
  // join below would wait for ever (a server stopped right after it started): wait, bounded,
  // for the loop to run first.
  for (int i = 0; i < 2000 && listener_.joinable() && !http_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  http_->stop();
  if (listener_.joinable()) listener_.join();
  store_->Flush();
}

Server::~Server() { Stop(); }

}  // namespace sluice::server
