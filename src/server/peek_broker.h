// PeekBroker: `sluice peek` through the controller (R-UX-5; bpeek). GET /v1/jobs/ID/peek asks
// the agent that runs the job for the tail of its output (wire/peek.h): the request becomes a
// `peek` order in that agent's next heartbeat reply (an outstanding long poll is woken), the
// agent answers in the heartbeat it sends at once, and the waiting request returns the text:
//   {"job": 12, "host": "h1", "text": "...", "offset": 1800, "size": 2100}
// Only the job's owner or an administrator may peek (R-SRV-5), only at a RUNNING job.
// Outcomes: kNotFound (no such job), kPermissionDenied, kFailedPrecondition (not running, or
// the agent's error: no output file ...), kUnavailable (no answer within the timeout).
// Representation: orders waiting per host, results by order id until their request takes them.
// Thread-safety: every method REQUIRES the context's mutex held (Peek waits on it).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/context.h"
#include "server/job_book.h"
#include "wire/peek.h"

namespace sluice::server {

// The query of GET /v1/jobs/ID/peek: `lines` (1 to 10000, default 10) or `offset` (>= 0).
// Errors: kInvalidArgument naming the parameter.
struct PeekQuery {
  int64_t lines = 10;
  std::optional<int64_t> offset;
};
Result<PeekQuery> ParsePeekQuery(const std::multimap<std::string, std::string>& params);

class PeekBroker {
 public:
  explicit PeekBroker(std::chrono::milliseconds timeout = std::chrono::seconds(5))
      : timeout_(timeout) {}

  // `lines` (no offset) or the bytes from `offset` (follow mode).
  Result<nlohmann::json> Peek(MutexLock& lock, ServerContext& ctx, JobBook& book,
                              const Caller& caller, JobId id, int64_t lines,
                              std::optional<int64_t> offset);

  // The agent side, from AgentRegistry::Heartbeat: orders for `host` (taken), and results.
  std::vector<wire::PeekOrder> TakeOrders(const std::string& host);
  bool HasOrders(const std::string& host) const { return orders_.contains(host); }
  void Deliver(const std::vector<wire::PeekResult>& results);

 private:
  std::chrono::milliseconds timeout_;
  int64_t next_id_ = 1;
  std::map<std::string, std::vector<wire::PeekOrder>> orders_;
  std::set<int64_t> waiting_;
  std::map<int64_t, wire::PeekResult> results_;
  std::condition_variable_any delivered_;
};

}  // namespace sluice::server
