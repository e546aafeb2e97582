// Server: the process around a Controller — store, HTTP listener, scheduling thread — as
// `sluice server` runs it and as tests start it in-process on port 0.
// With an etcd store (R-HA-1, R-HA-2) the server listens at once as a standby (ha_front.h:
// 307 to the leader, 503 while there is none, /healthz), campaigns on a background thread,
// and once the store leads restores through Controller::TakeOver and starts scheduling. When
// the store deposes it, the controller steps down at once (Controller::StepDown) and, with
// `exit_when_deposed`, the process exits (status 0) so that a service manager restarts it as
// a standby. A leader that its agents cannot reach while a standby can gives the lead up
// (WatchAgentsReach): the standby counts the agents that reach it and publishes the count in
// the store (HaFront::AgentsHeardWithin, Store::PublishAgentsHeard).
// Under systemd (R-OPS-2, docs/systemd.md) the loop that must stay alive keeps the watchdog
// alive: a standby's campaign while it waits for the lead, then the scheduling thread; a
// deposed server says STOPPING=1 before it exits.
// Thread-safety: Start/Stop from one thread; ServiceStatus from any.
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "server/connection_guard.h"
#include "server/controller.h"
#include "store/store.h"

namespace httplib {
class Server;
}

namespace sluice::daemon {
class ServiceNotifier;
}  // namespace sluice::daemon

namespace sluice::server {

class HttpApi;
class HaFront;
class StatsSampler;

struct ServerOptions {
  std::string config_path;
  std::string state_dir;
  // A state directory or etcd://H:P[,H:P...][/PREFIX] (Store::OpenUrl); empty: state_dir.
  std::string store_url;
  std::string listen = "127.0.0.1:0";  // HOST:PORT; port 0 picks a free port
  // Both set: serve HTTPS with this PEM certificate (chain) and key (R-SEC-2); else HTTP.
  std::string tls_cert;
  std::string tls_key;
  // The URL other controllers send clients to while this one leads; empty:
  // http://LISTEN-HOST:PORT.
  std::string advertise;
  int leader_lease_seconds = 3;  // the etcd election lease (R-HA-1)
  bool exit_when_deposed = false;
  ControllerOptions controller;
  ConnectionLimits connections;         // caps and deadlines of HTTP connections
  std::shared_ptr<spdlog::logger> log;  // null: spdlog's default logger
  Controller::ClockMs clock;            // null: the system clock
  int64_t stats_interval_seconds = 10;  // the dashboard's samples (stats_sampler.h, R-UI-3)
  // Borrowed, outlives the server; null: none (tests, a server run by hand).
  daemon::ServiceNotifier* notifier = nullptr;
};

class Server {
 public:
  // Loads the config, takes the state directory, restores, binds and starts serving: it
  // returns once the listener accepts (a standby's: redirects to the leader, /healthz).
  // Errors name what failed (config file and line, locked state directory, port in use).
  static Result<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();

  int port() const { return port_; }
  // The advertised URL (the election value with etcd).
  const std::string& url() const { return url_; }
  Controller& controller() { return *controller_; }
  // The service manager's STATUS= line now (service_status.h). Takes the controller's lock.
  std::string ServiceStatus();
  // What the connection guard has counted so far (tests, metrics).
  ConnectionGuard::Counts connections() const { return guard_->counts(); }
  // Stops serving and the scheduling thread; waits for queued store writes.
  void Stop();

 private:
  Server() = default;
  // The standby's wait for the lead, then the takeover (etcd stores only); then, leading,
  // WatchAgentsReach until it stops.
  void Campaign(bool exit_when_deposed, int64_t agent_lease_ms);
  // Leading: gives the lead up when a standby heard more agents than this controller for an
  // agent lease (issue 44).
  void WatchAgentsReach(int64_t agent_lease_ms);
  // Sleeps `d` in slices, returning early once Stop began; false then.
  bool SleepUnlessStopping(std::chrono::milliseconds d);
  // Binds `listen`; returns the port (or -1).
  int Bind(const std::string& host, int port);
  // The REST API, the dashboard, the stats series and the connection guard on http_.
  void InstallRoutes(const ServerOptions& options);

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Controller> controller_;
  std::unique_ptr<ConnectionGuard> guard_;  // outlives http_: its workers release into it
  std::unique_ptr<httplib::Server> http_;
  std::unique_ptr<HttpApi> api_;
  std::unique_ptr<HaFront> front_;
  std::unique_ptr<StatsSampler> stats_;  // the dashboard's time series
  daemon::ServiceNotifier* notifier_ = nullptr;
  bool standby_ = false;  // an etcd store: elected, not leading from the start
  std::thread listener_;
  std::thread campaigner_;
  std::atomic<bool> stopping_ = false;
  std::string url_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace sluice::server
