#include "server/server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <chrono>
#include <thread>

#include "config/cluster_yaml.h"
#include "server/connection_guard.h"
#include "server/http_api.h"

namespace sluice::server {

namespace {

// Each connection takes two descriptors (ConnectionGuard keeps a dup): the soft limit
// (often 1024) goes up to the hard one.
void RaiseOpenFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  const size_t colon = options.listen.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument("--listen " + options.listen + ": expected HOST:PORT");
  }
  const std::string host = options.listen.substr(0, colon);
  int port = -1;
  try {
    port = std::stoi(options.listen.substr(colon + 1));
  } catch (...) {
  }
  if (port < 0 || port > 65535) {
    return InvalidArgument("--listen " + options.listen + ": bad port");
  }
  RaiseOpenFileLimit();
  config::AuthConfig auth;
  Result<core::ClusterConfig> config = config::LoadClusterConfig(options.config_path, &auth);
  if (!config) return config.error();
  Result<std::unique_ptr<store::Store>> store = store::Store::Open(options.state_dir);
  if (!store) return store.error();
  if (!options.clock) {
    options.clock = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
  options.controller.config_path = options.config_path;
  std::unique_ptr<Server> server(new Server());
  server->store_ = std::move(*store);
  Result<std::unique_ptr<Controller>> controller =
      Controller::Create(ControllerDeps{.config = std::move(*config),
                                        .auth = std::move(auth),
                                        .store = server->store_.get(),
                                        .options = options.controller,
                                        .clock = options.clock,
                                        .log = options.log});
  if (!controller) return controller.error();
  server->controller_ = std::move(*controller);
  server->guard_ = std::make_unique<ConnectionGuard>(
      options.connections, options.log ? options.log : spdlog::default_logger());
  server->http_ = std::make_unique<httplib::Server>();
  // A reply goes out in two writes (headers, body); with Nagle's algorithm the body waits
  // for the client's delayed ACK (~40 ms) on a keep-alive connection.
  server->http_->set_tcp_nodelay(true);
  server->api_ = std::make_unique<HttpApi>(*server->controller_);
  server->api_->Install(*server->http_);
  server->guard_->Attach(*server->http_);
  if (port == 0) {
    server->port_ = server->http_->bind_to_any_port(host);
  } else {
    server->port_ = server->http_->bind_to_port(host, port) ? port : -1;
  }
  if (server->port_ <= 0) {
    return Status(StatusCode::kUnavailable, "cannot listen on " + options.listen);
  }
  server->guard_->Watch(server->port_);
  server->controller_->Start();
  httplib::Server* http = server->http_.get();
  server->listener_ = std::thread([http] { http->listen_after_bind(); });
  return server;
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  api_->Shutdown();
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
