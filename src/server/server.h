// Server: the process around a Controller — state directory, HTTP listener, scheduling
// thread — as `sluice server` runs it and as tests start it in-process on port 0.
// Thread-safety: Start/Stop from one thread.
#pragma once

#include <spdlog/logger.h>

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

namespace sluice::server {

class HttpApi;

struct ServerOptions {
  std::string config_path;
  std::string state_dir;
  std::string listen = "127.0.0.1:0";  // HOST:PORT; port 0 picks a free port
  ControllerOptions controller;
  ConnectionLimits connections;  // caps and deadlines of HTTP connections
  std::shared_ptr<spdlog::logger> log;  // null: spdlog's default logger
  Controller::ClockMs clock;            // null: the system clock
};

class Server {
 public:
  // Loads the config, takes the state directory, restores, binds and starts serving.
  // Errors name what failed (config file and line, locked state directory, port in use).
  static Result<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();

  int port() const { return port_; }
  Controller& controller() { return *controller_; }
  // What the connection guard has counted so far (tests, metrics).
  ConnectionGuard::Counts connections() const { return guard_->counts(); }
  // Stops serving and the scheduling thread; waits for queued store writes.
  void Stop();

 private:
  Server() = default;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Controller> controller_;
  std::unique_ptr<ConnectionGuard> guard_;  // outlives http_: its workers release into it
  std::unique_ptr<httplib::Server> http_;
  std::unique_ptr<HttpApi> api_;
  std::thread listener_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace sluice::server
