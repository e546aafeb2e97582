// `sluice server`: the controller (issue 7, SPEC §8). Prints `listening on HOST:PORT` once
// serving; SIGHUP reloads the configuration; SIGTERM/SIGINT stop it. Under systemd
// (NOTIFY_SOCKET, R-OPS-2, docs/systemd.md) it says READY=1 once serving, RELOADING=1 around
// a SIGHUP's reload, STOPPING=1 when it stops, and refreshes its STATUS= line every 2 s.
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/log_flags.h"
#include "daemon/service_notifier.h"
#include "server/server.h"

namespace sluice::cli {

namespace {

// Caps and deadlines of HTTP connections (server/connection_guard.h).
void AddConnectionFlags(CLI::App& cmd, server::ConnectionLimits& limits) {
  cmd.add_option("--max-connections", limits.max_connections,
                 "Open HTTP connections at most (beyond: 503 at accept)")
      ->check(CLI::Range(8, 100000));
  cmd.add_option("--reserved-connections", limits.reserved,
                 "Of --max-connections, kept for agents and /healthz")
      ->check(CLI::Range(1, 100000));
  cmd.add_option("--max-connections-per-address", limits.max_per_address,
                 "Connections from one client address before only agents and /healthz are served")
      ->check(CLI::Range(1, 100000));
  cmd.add_option_function<int64_t>(
         "--request-timeout-ms",
         [&limits](int64_t ms) { limits.request_timeout = std::chrono::milliseconds(ms); },
         "A request's line, headers and body must arrive within this (default 10000)")
      ->check(CLI::Range(int64_t{100}, int64_t{600'000}));
}

// What `sluice server`'s flags set.
struct ServerFlags {
  std::string config;
  std::string state;
  std::string store;
  std::string advertise;
  int leader_lease_seconds = 3;
  double keep_history_days = 30;
  std::string listen = "127.0.0.1:8740";
  int64_t lease_seconds = 10;
  int64_t grace_seconds = 5;
  int64_t absence_seconds = 300;
  int32_t max_dispatch = 3;
  int32_t close_after_failures = 3;
  int64_t keep_ended_seconds = 3600;
  std::string tls_cert;
  std::string tls_key;
  std::string munge_socket;
  server::ConnectionLimits connections;
  int64_t stats_interval = 10;
  int64_t estimate_jobs_per_queue = server::ControllerOptions{}.estimate_jobs_per_queue;
  LogFlags log;
};

// A CLI11 check for "-1 (for ever) or a number >= min"; `expected` says both in words.
CLI::Validator MinusOneOrAtLeast(double min, const std::string& expected,
                                 const std::string& description) {
  return CLI::Validator(
      [min, expected](const std::string& text) -> std::string {
        try {
          const double v = std::stod(text);
          if (v == -1 || v >= min) return "";
        } catch (...) {
        }
        return "expected " + expected + ", got " + text;
      },
      description);
}

// Where the state lives, and the etcd election (docs/ha.md).
void AddStoreFlags(CLI::App& cmd, ServerFlags& flags) {
  cmd.add_option("--config", flags.config, "Cluster YAML")->required();
  auto* state = cmd.add_option("--state", flags.state, "State directory (SQLite store, lock)");
  // High availability (docs/ha.md): several controllers on one etcd store, one leads.
  auto* store = cmd.add_option(
      "--store", flags.store,
      "Store URL: a state directory or etcd://HOST:PORT[,HOST:PORT...][/PREFIX] (high "
      "availability: standbys redirect to the leader)");
  state->excludes(store);
  store->excludes(state);
  cmd.add_option("--advertise", flags.advertise,
                 "URL other controllers send clients to while this one leads (default "
                 "http://LISTEN)");
  cmd.add_option("--leader-lease-seconds", flags.leader_lease_seconds,
                 "etcd election lease: a dead leader is replaced after about this long")
      ->check(CLI::Range(1, 60));
  cmd.add_option("--keep-history-days", flags.keep_history_days,
                 "Ended jobs' rows are deleted from the store this long after they end "
                 "(fractions allowed; -1: never)")
      ->check(MinusOneOrAtLeast(0, "-1 (keep for ever) or a number of days >= 0", "-1|DAYS"));
}

// Agents' leases, dispatch retries, how long ended jobs stay listed, and the periodic tasks'
// scope (the dashboard's samples, start estimates).
void AddLifetimeFlags(CLI::App& cmd, ServerFlags& flags) {
  cmd.add_option("--lease-seconds", flags.lease_seconds, "Agent lease")->check(CLI::PositiveNumber);
  cmd.add_option("--agent-absence-seconds", flags.absence_seconds,
                 "How long agents keep running jobs without a controller's answer; a silent "
                 "host's jobs are requeued after this plus the grace (0: the lease)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--host-loss-grace-seconds", flags.grace_seconds,
                 "Wait after the lease before on_host_loss")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--max-dispatch-attempts", flags.max_dispatch,
                 "Failed launches before a job ends EXIT DISPATCH_FAILED")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--close-host-after-launch-failures", flags.close_after_failures,
                 "Launch failures in a row the host caused (cgroups, fork, a hung launch) "
                 "before it is closed with the cause (0: never)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--keep-ended-seconds", flags.keep_ended_seconds,
                 "How long ended jobs stay listed after they end (-1: for ever; their rows "
                 "stay in the store)")
      ->check(MinusOneOrAtLeast(60, "-1 (keep ended jobs for ever) or at least 60 seconds",
                                "-1|SECONDS>=60"));
  cmd.add_option("--stats-interval", flags.stats_interval,
                 "Seconds between the dashboard's samples (GET /v1/stats; 8640 are kept)")
      ->check(CLI::Range(1, 3600));
  cmd.add_option("--estimate-jobs-per-queue", flags.estimate_jobs_per_queue,
                 "Start estimates cover the first this many waiting jobs of each queue (0: all)")
      ->check(CLI::NonNegativeNumber);
  AddLogFlags(&cmd, flags.log);
}

// The listener: address, TLS, MUNGE and connection caps.
void AddListenFlags(CLI::App& cmd, ServerFlags& flags) {
  cmd.add_option("--listen", flags.listen, "HOST:PORT to listen on (port 0: any free port)");
  cmd.add_option("--tls-cert", flags.tls_cert, "Serve HTTPS with this PEM certificate (chain)");
  cmd.add_option("--tls-key", flags.tls_key, "The PEM private key of --tls-cert");
  cmd.add_option("--munge-socket", flags.munge_socket,
                 "Accept MUNGE credentials, decoded by the munged at this socket "
                 "(overrides auth.munge)");
  AddConnectionFlags(cmd, flags.connections);
}

server::ServerOptions OptionsFrom(const ServerFlags& flags) {
  return server::ServerOptions{
      .config_path = flags.config,
      .state_dir = flags.state,
      .store_url = flags.store,
      .listen = flags.listen,
      .tls_cert = flags.tls_cert,
      .tls_key = flags.tls_key,
      .advertise = flags.advertise,
      .leader_lease_seconds = flags.leader_lease_seconds,
      .exit_when_deposed = true,
      .controller = {.lease_ms = flags.lease_seconds * 1000,
                     .host_loss_grace_ms = flags.grace_seconds * 1000,
                     .agent_absence_ms = flags.absence_seconds * 1000,
                     .max_dispatch_attempts = flags.max_dispatch,
                     .close_host_after_launch_failures = flags.close_after_failures,
                     .explain_interval_ms = 250,
                     .keep_ended_seconds = flags.keep_ended_seconds,
                     .keep_history_seconds =
                         flags.keep_history_days < 0
                             ? -1
                             : static_cast<int64_t>(flags.keep_history_days * 86'400),
                     .estimate_jobs_per_queue = flags.estimate_jobs_per_queue,
                     .munge_socket = flags.munge_socket},
      .connections = flags.connections,
      .stats_interval_seconds = flags.stats_interval};
}

// SIGHUP: re-reads the configuration; systemd sees RELOADING=1 until READY=1 follows.
void Reload(server::Server& server, daemon::ServiceNotifier& notifier) {
  notifier.Reloading("reloading the configuration");
  server::Answer reply = server.controller().Reconfigure();
  if (reply.ok()) {
    spdlog::info("SIGHUP: reconfigure: {}", reply->dump());
  } else {
    spdlog::info("SIGHUP: reconfigure refused: {}",
                 reply.failure() ? reply.failure()->message() : reply.refusal()->message);
  }
  notifier.Ready(server.ServiceStatus());
}

// Waits for SIGTERM or SIGINT (returned), reloading on SIGHUP and refreshing the service
// manager's STATUS= line every 2 s meanwhile. NOTE: a controller hung with its lock held
// holds this thread too (ServiceStatus takes the lock); the watchdog then ends the process.
int ServeUntilStopSignal(server::Server& server, const sigset_t& signals,
                         daemon::ServiceNotifier& notifier) {
  constexpr timespec kRefresh{.tv_sec = 2, .tv_nsec = 0};
  while (true) {
    const int sig = notifier.enabled() ? sigtimedwait(&signals, nullptr, &kRefresh)
                                       : sigwaitinfo(&signals, nullptr);
    if (sig < 0) {  // the refresh is due (EAGAIN), or EINTR
      if (notifier.enabled()) notifier.Status(server.ServiceStatus());
      continue;
    }
    if (sig != SIGHUP) return sig;
    Reload(server, notifier);
  }
}

// Starts the controller and serves until SIGTERM/SIGINT; SIGHUP reloads the configuration.
int RunServer(const ServerFlags& flags) {
  if (flags.state.empty() && flags.store.empty()) {
    std::cerr << "sluice server: --state DIR or --store URL is required\n";
    return 2;
  }
  // Signals go to one thread (ServeUntilStopSignal), never to the HTTP or scheduling threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGHUP);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Logs go to stderr (or --log-file): stdout carries only the `listening on` line tests read.
  if (Status logging = SetUpLogging(flags.log, "sluice"); !logging.ok()) {
    std::cerr << "sluice server: " << logging.message() << "\n";
    return 2;
  }
  // Before any thread starts: it unsets NOTIFY_SOCKET and the watchdog's variables.
  const std::unique_ptr<daemon::ServiceNotifier> notifier =
      daemon::ServiceNotifier::FromEnvironment();
  server::ServerOptions options = OptionsFrom(flags);
  options.notifier = notifier.get();
  auto server = server::Server::Start(std::move(options));
  if (!server) {
    std::cerr << "sluice server: " << server.error().message() << "\n";
    notifier->Status("failed to start: " + server.error().message());  // systemctl status
    return server.error().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  const std::string host = flags.listen.substr(0, flags.listen.rfind(':'));
  std::printf("listening on %s:%d\n", host.c_str(), (*server)->port());
  if (flags.store.starts_with("etcd://")) {
    std::printf("advertising %s\n", (*server)->url().c_str());
  }
  std::fflush(stdout);
  spdlog::info("dashboard: {}/ui/ (log in with a user token, or add #token=TOKEN)",
               (*server)->url());
  notifier->Ready((*server)->ServiceStatus());
  const int sig = ServeUntilStopSignal(**server, signals, *notifier);
  spdlog::info("signal {}: stopping", sig);
  notifier->Stopping("stopping (signal " + std::to_string(sig) + ")");
  (*server)->Stop();
  return 0;
}

}  // namespace

void RegisterServerCommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("server", "Run the controller: REST API, store, scheduling");
  auto flags = std::make_shared<ServerFlags>();
  AddStoreFlags(*cmd, *flags);
  AddListenFlags(*cmd, *flags);
  AddLifetimeFlags(*cmd, *flags);
  cmd->callback([flags, &exit_code] { exit_code = RunServer(*flags); });
}

}  // namespace sluice::cli
