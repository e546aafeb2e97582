// EtcdClient: the few etcd v3 calls the etcd store needs, over etcd's JSON gateway (the
// grpc-gateway every etcd 3.4 member serves on its client URL under /v3/).
//
// Representation: a list of endpoints ("127.0.0.1:2379") and one cpp-httplib client per
// endpoint, kept open between calls. Keys and values travel base64-encoded and 64-bit numbers
// as decimal strings, as the gateway's proto3 JSON mapping wants; this class hides both.
// Failover: a call goes to the current endpoint; when it cannot connect (the request was
// surely not sent) the call moves to the next endpoint and retries, each endpoint once. A
// call that was sent and then failed (timeout, 5xx) is not retried, because it may have been
// applied: it answers kUnavailable and the next call starts at the next endpoint.
// Errors: kUnavailable (no endpoint, timeout, no quorum: gRPC Unavailable/DeadlineExceeded),
// kInvalidArgument (etcd refused the request: too many operations, too large), kNotFound
// (e.g. an unknown lease), kInternal (an answer that cannot be read).
// Thread-safety: none; each thread of the etcd store owns its own EtcdClient.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::store {

std::string Base64Encode(const std::string& bytes);
void AppendBase64(std::string& out, std::string_view bytes);
// Returns false when `text` is not base64.
bool Base64Decode(const std::string& text, std::string& bytes);

// The end of the key range holding every key that starts with `prefix`.
std::string PrefixRangeEnd(const std::string& prefix);

struct EtcdKv {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t lease = 0;
};

// A txn comparison, always EQUAL: the key's create revision, mod revision, or value.
struct EtcdCompare {
  enum class Target { kCreate, kMod, kValue };
  std::string key;
  Target target = Target::kCreate;
  int64_t revision = 0;  // kCreate, kMod; 0 for kCreate means "the key does not exist"
  std::string value;     // kValue
};

// A txn operation: put (with an optional lease) or delete one key.
struct EtcdOp {
  enum class Kind { kPut, kDelete };
  Kind kind = Kind::kPut;
  std::string key;
  std::string value;
  int64_t lease = 0;
};

struct EtcdTxnResult {
  bool succeeded = false;
  int64_t revision = 0;             // the store's revision after the txn
  std::vector<EtcdKv> failure_kvs;  // what the failure branch's range read
};

struct EtcdRange {
  int64_t revision = 0;
  std::vector<EtcdKv> kvs;
  bool more = false;
};

struct EtcdLease {
  int64_t id = 0;
  int64_t ttl = 0;  // seconds; 0 when the lease is gone
};

class EtcdClient {
 public:
  // REQUIRES: !endpoints.empty(). `timeout` bounds each call's wait for an answer, plus 1 ms
  // per KiB of request (a txn of many rows).
  EtcdClient(std::vector<std::string> endpoints, std::chrono::milliseconds timeout);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // Keys in [key, range_end) (range_end "" reads one key), at most `limit` (0: all), at
  // `revision` (0: the newest).
  Result<EtcdRange> Range(const std::string& key, const std::string& range_end, int64_t limit,
                          int64_t revision);
  // If every compare holds, applies `success` atomically; else reads `failure_range_key`
  // (when not empty) in the failure branch.
  Result<EtcdTxnResult> Txn(const std::vector<EtcdCompare>& compares,
                            const std::vector<EtcdOp>& success,
                            const std::string& failure_range_key);
  Result<EtcdLease> GrantLease(int64_t ttl_seconds);
  // One renewal; the answer's ttl is 0 when the lease no longer exists.
  Result<EtcdLease> KeepAlive(int64_t lease_id);
  Status RevokeLease(int64_t lease_id);
  // Compacts the key-value history up to `revision` (older revisions become unreadable).
  Status Compact(int64_t revision);
  // Watches `key` from `start_revision` and returns true as soon as it is deleted, false when
  // `wait` passed without that (a streaming /v3/watch call).
  Result<bool> WaitForDelete(const std::string& key, int64_t start_revision,
                             std::chrono::milliseconds wait);

  const std::string& current_endpoint() const { return endpoints_[current_]; }

 private:
  class Connection;
  // POSTs `body` (JSON text) to `path` with failover; answers the response, parsed once
  // (`filter` may skip parts of it, as nlohmann::json::parse's callback).
  Result<nlohmann::json> Call(const std::string& path, const std::string& body,
                              const nlohmann::json::parser_callback_t& filter = nullptr);

  std::vector<std::string> endpoints_;
  std::vector<std::unique_ptr<Connection>> connections_;
  size_t current_ = 0;
  std::chrono::milliseconds timeout_;
};

}  // namespace sluice::store
