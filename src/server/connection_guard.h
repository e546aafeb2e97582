// ConnectionGuard: who gets a worker, and for how long (issue 19, "Connections"). Without it,
// 300 slowloris sockets or 500 idle keep-alive connections took every worker of the HTTP
// server, new clients waited, and agents that had to reconnect self-fenced.
//
// Rules, per listening port the guard watches:
//   1. At accept: more than `max_connections` open: the connection gets a 503 and is closed.
//      Beyond `max_connections - reserved` in total, or beyond `max_per_address` from one
//      client address, it is an *overflow* connection: it may only call the agent routes
//      (/v1/agents/...) and /healthz, and its deadlines are `overflow_timeout`.
//   2. Deadlines (a watchdog thread shuts down the socket of a connection that misses one):
//      the request line, headers and body must arrive within `request_timeout` of the first
//      wait (after a response: `idle_timeout` + `request_timeout`); a handler has no deadline
//      (long polls, event streams), and writes are bounded by the socket send timeout.
//   3. Every connection has a worker thread of its own (the task queue grows up to
//      `max_connections`), so a slow connection never delays another's start.
//
// Representation: one record per open connection (a dup of its socket, so the watchdog's
// shutdown can never reach a reused descriptor), counts per client address, and a
// thread-local pointer from the worker to its connection: the request guard and the HTTP
// handlers call the static functions below on that worker.
//
// NOTE: cpp-httplib 0.11 (Debian 12) offers no hook that sees an accepted socket
// (process_and_close_socket is private), so this file interposes libc's accept(): the
// process's accept() calls accept4() and, for a port a guard watches, registers the socket
// before httplib enqueues it. Sockets of ports no guard watches pass through untouched.
// Thread-safety: all members lock `mu_`; the static functions act on the caller's thread.
#pragma once

#include <httplib.h>
#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"

namespace sluice::server {

struct ConnectionLimits {
  int max_connections = 512;
  int reserved = 64;  // of max_connections: agents and /healthz only
  int max_per_address = 64;
  std::chrono::milliseconds idle_timeout{5000};  // keep-alive between requests
  std::chrono::milliseconds request_timeout{10'000};
  std::chrono::milliseconds overflow_timeout{1000};
};

class ConnectionGuard {
 public:
  ConnectionGuard(ConnectionLimits limits, std::shared_ptr<spdlog::logger> log);
  ~ConnectionGuard();
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  // Sets `server`'s task queue, keep-alive and socket timeouts and its logger (which marks
  // the end of each response). REQUIRES: before the server listens; the guard outlives it.
  void Attach(httplib::Server& server);
  // Connections accepted on `port` from now on are counted and watched.
  void Watch(int port);

  struct Counts {
    int open = 0;
    int64_t refused = 0;    // closed at accept (rule 1)
    int64_t overflow = 0;   // accepted beyond a share
    int64_t timed_out = 0;  // shut down by the watchdog (rule 2)
    int64_t busy = 0;       // overflow connections refused a user route
  };
  Counts counts() const;

  // --- On the connection's worker thread (no-ops on other threads) ---
  // The request line and headers arrived: kUnavailable when an overflow connection asks for
  // a user route; otherwise the body's deadline starts (or, without one, the handler runs).
  static Status OnHeaders(const std::string& path, bool has_body);
  // The handler runs (the body was read): no deadline until the response is written.
  static void MarkHandling();
  // The request is refused before its body (`body_bytes` announced) was read: once the
  // response is written, the body is read and dropped (never kept, within the request
  // deadline) and the connection closed, so no byte of it can be taken for a next request.
  static void StopReading(int64_t body_bytes);

  // The accept() interposition's entry (connection_guard.cc); not for other callers.
  static int OnAccept(int listen_fd, int fd);

 private:
  struct Connection;
  class WorkerQueue;

  // Rule 1 for a new socket: registers it and returns it, or nullptr after the 503.
  std::shared_ptr<Connection> Admit(int fd);
  void Release(const std::shared_ptr<Connection>& connection);
  void SetPhase(Connection& connection, bool handling, std::chrono::milliseconds budget);
  void WatchLoop();

  const ConnectionLimits limits_;
  const std::shared_ptr<spdlog::logger> log_;
  mutable Mutex mu_{LockRank::kConnections};
  std::condition_variable_any stop_cv_;
  bool stopping_ = false;
  int port_ = 0;
  std::map<uint64_t, std::shared_ptr<Connection>> open_;
  std::map<std::string, int> per_address_;
  uint64_t next_id_ = 1;
  Counts counts_;
  std::chrono::steady_clock::time_point last_warning_{};
  std::thread watchdog_;
};

}  // namespace sluice::server
