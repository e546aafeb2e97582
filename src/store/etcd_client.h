// EtcdClient: the few etcd v3 calls the etcd store needs, over etcd's gRPC API (the part of it
// in store/etcd_rpc.proto), which every etcd 3.x member serves on its client URL. Not etcd's
// JSON gateway: decoding JSON and base64 cost etcd 5-7x the CPU per put of gRPC
// (docs/performance.md), and at scale etcd's CPU sets the store's rate.
//
// Representation: a list of endpoints ("127.0.0.1:2379") and one gRPC channel per endpoint,
// its own TCP connection kept open between calls.
// Failover: a call goes to the current endpoint; when it cannot connect (the request was
// surely not sent) the call moves to the next endpoint and retries, each endpoint once. A
// call that was sent and then failed (deadline, no quorum) is not retried, because it may have
// been applied: it answers kUnavailable and the next call starts at the next endpoint.
// Errors: kUnavailable (no endpoint, deadline, no quorum: gRPC Unavailable/DeadlineExceeded),
// kInvalidArgument (etcd refused the request: too many operations, too large), kNotFound
// (e.g. an unknown lease), kInternal (an answer that cannot be read).
// Thread-safety: none; each thread of the etcd store owns its own EtcdClient.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::store {

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
  uint64_t raft_term = 0;  // of the member that answered (a linearizable read: the quorum's)
  std::vector<EtcdKv> kvs;
  bool more = false;
};

struct EtcdLease {
  int64_t id = 0;
  int64_t ttl = 0;  // seconds; 0 when the lease is gone
  // The raft term of the member that answered: one that led in an older term (paused, then
  // resumed before it learnt of the newer one) can renew a lease the quorum let expire.
  uint64_t raft_term = 0;
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
  // `wait` passed without that (a Watch stream).
  Result<bool> WaitForDelete(const std::string& key, int64_t start_revision,
                             std::chrono::milliseconds wait);

  const std::string& current_endpoint() const { return endpoints_[current_]; }

 private:
  class Connection;
  // After a failure on the current endpoint: its error prefix ("etcd HOST:PORT Txn: "), and
  // the next endpoint becomes current, where the next call starts.
  std::string FailOver(const char* method);
  // Runs `rpc(connection, context)`, one gRPC call on the current endpoint whose context
  // carries the call's deadline, with the failover above. `method` names it in errors.
  template <class Rpc>
  Status Invoke(const char* method, size_t request_bytes, Rpc&& rpc);

  std::vector<std::string> endpoints_;
  std::vector<std::unique_ptr<Connection>> connections_;
  size_t current_ = 0;
  std::chrono::milliseconds timeout_;
};

}  // namespace sluice::store
