// EtcdStore: the Store interface on an etcd v3 cluster, for controllers in high availability
// (R-HA-1, R-HA-4). docs/ha.md has the design in a page; this is its contract.
//
// Representation, under PREFIX (default "/sluice"):
//   PREFIX/jobs/<id, 20 digits>   a StoredJob as JSON but for its spec (row_codec.h), by id
//   PREFIX/specs/<id, 20 digits>  that job's spec, put with its first row and again only when
//                                 it changes (`modify`, R-UX-7), in the row's txn or an earlier
//                                 one (a row of an older version that carries its spec is read
//                                 as it is, and its next write adds the key)
//   PREFIX/hosts/<name>           a StoredHost's spec
//   PREFIX/settings/<key>         an integer setting, decimal
//   PREFIX/meta/config_version    decimal
//   PREFIX/meta/schema_version    decimal, the layout's version (store/etcd_schema.h, R-OPS-5)
//   PREFIX/meta/leader            the leader's candidate name, attached to its lease
//   PREFIX/meta/heard/<candidate> how many agents a standby heard lately, under its lease
// Election: a candidate grants a lease (TTL lease_seconds) and, in one txn, creates the
// leader key under it if the key does not exist. The winner's epoch is the leader key's
// create revision: unique per election and growing. Losers watch the key (a Watch stream) and
// try again when it is deleted (revoked lease, expired lease).
// Writes: a writer thread groups the queued batches into txns (group commit); every txn
// compares the leader key's create revision with the epoch and its value with the
// candidate name (fencing), so a txn of a deposed leader changes nothing. A txn holds at most
// max_txn_ops operations and about max_request_bytes bytes. A batch within those limits is
// never split (all-or-nothing); a larger one (a cycle that starts more jobs than one txn
// holds, a large submission) is committed over as many txns as it needs, in order, and is
// done after the last: a crash in between leaves a prefix of it stored, each row whole. Only a
// single key larger than the byte limit fails (kInvalidArgument, before anything is sent).
// etcd must run with --max-txn-ops and --max-request-bytes at least those (defaults 4096 and
// 8 MiB, docs/ha.md).
// Compaction (R-HA-5): every compact_revisions revisions the writer compacts etcd's history
// up to its last txn's revision minus 100 (so that watches started just before still work).
// Leadership ends for good (kDeposed, the deposed callback runs once) when a renewal finds
// the lease gone or a write's compare fails; every later write fails with
// kFailedPrecondition. While renewals fail (no quorum, no endpoint) the store reads
// kCandidate once its lease may have expired by its own clock, and kLeader again when a
// renewal succeeds: writes meanwhile fail with kUnavailable and are not retried.
// Invariants: epoch() only grows across elections on one prefix; a txn that committed was
// sent under the epoch it compares; batches commit in the order they were queued.
// Thread-safety: every public method from any thread; three threads inside: the writer, the
// lease keeper (renews every ttl/3) and the campaigner.
// Implements R-HA-1, R-HA-4 (store side).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "store/etcd_client.h"
#include "store/store.h"

namespace sluice::store {

struct EtcdOptions {
  std::vector<std::string> endpoints;  // "host:port"
  std::string prefix = "/sluice";
  std::string candidate = "sluice";
  int lease_seconds = 3;
  int64_t max_txn_ops = 4096;
  int64_t max_request_bytes = 8 << 20;
  // The leader compacts etcd's history every this many revisions (R-HA-5), keeping the last
  // kCompactKeep; 0: never (leave it to etcd's --auto-compaction flags).
  int64_t compact_revisions = 10'000;
  std::chrono::milliseconds request_timeout{2000};
  // Tests: sees each write txn as the writer sends it (compares, operations), so a test can
  // deliver it again late, as a member healed from a partition may (issue 44).
  std::function<void(const std::vector<EtcdCompare>&, const std::vector<EtcdOp>&)> on_write_txn;
};

// `etcd://H:P[,H:P...][/PREFIX][?max-txn-ops=N&max-request-bytes=N]`.
// Errors: kInvalidArgument naming the part that is wrong.
Result<EtcdOptions> ParseEtcdUrl(const std::string& url);

class EtcdStore final : public Store {
 public:
  // Checks that an endpoint answers and starts campaigning. Errors: kUnavailable when no
  // endpoint answers; kInvalidArgument for options out of range.
  static Result<std::unique_ptr<EtcdStore>> Open(const EtcdOptions& options);
  ~EtcdStore() override;

  uint64_t epoch() const override { return epoch_.load(); }
  const std::string& dir() const override { return url_; }
  Result<Snapshot> Load() override;
  void Write(WriteBatch batch, std::function<void(const Status&)> done) override;
  void Flush() override;
  StoreStats stats() const override;
  Status AwaitLeadership(std::chrono::milliseconds timeout) override;
  Role role() const override;
  std::optional<std::string> leader() const override;
  void SetDeposedCallback(std::function<void(const Status&)> deposed) override;
  Status OverwriteEpochForTest(uint64_t epoch) override;
  void PublishAgentsHeard(int count) override;
  std::vector<int> RivalsAgentsHeard() override;
  void Resign(const Status& why) override;

  // Tests: stop renewing the lease, as a paused or dead controller would (it expires).
  void StopKeepAliveForTest() { keepalive_stopped_ = true; }

 private:
  struct Pending {
    WriteBatch batch;
    std::function<void(const Status&)> done;
  };
  // One txn's worth of operations.
  struct Chunk {
    std::vector<EtcdOp> ops;
    std::vector<size_t> batches;  // indexes in the group of the batches that end in this chunk
  };
  // A group's chunks, and the jobs whose spec they put (spec_hashes_ has them already; a
  // failed group takes them out again, so their next write puts the spec again).
  struct ChunkedGroup {
    std::vector<Chunk> chunks;
    std::vector<JobId> new_specs;
  };

  explicit EtcdStore(EtcdOptions options);
  std::string JobKey(JobId id) const;
  std::string SpecKey(JobId id) const;
  std::string LeaderKey() const { return options_.prefix + "/meta/leader"; }
  // PREFIX/meta/heard/<candidate>: how many agents that candidate heard lately (a standby's).
  std::string HeardPrefix() const { return options_.prefix + "/meta/heard/"; }
  // PREFIX/meta/written: the mark of the leader's last applied write txn ("EPOCH.N"; "claimed"
  // by its claim). Each txn requires the key's mod revision its predecessor left, so a txn
  // applied late (sent, timed out, resent, then delivered by a member healed from a
  // partition) cannot overwrite newer rows: it fails its compare (issue 44).
  std::string WrittenKey() const { return options_.prefix + "/meta/written"; }
  EtcdClient& ReachClient();

  void CampaignLoop();
  void KeepAliveLoop();
  // After a renewal answered in `renewal_term`: whether the leader key, read through a
  // quorum, is still this leader's and the renewal of the quorum's term (kHeld), another's or
  // gone (kLost: deposed here), or neither is known (kUnknown: not read, a renewal of an
  // older term, or not leading).
  enum class LeadCheck { kHeld, kLost, kUnknown };
  LeadCheck ConfirmLead(EtcdClient& client, uint64_t renewal_term);
  // The status of a leader fenced at `epoch`, naming the leader key's holder (`leader_key`: the
  // key as read, empty when gone), who becomes leader().
  Status FencedBy(const std::vector<EtcdKv>& leader_key, uint64_t epoch);
  void WriterLoop();
  // Turns a group of batches into txn-sized chunks; a batch with a key too large for any txn
  // gets its Status in `refused` (indexed like `group`).
  ChunkedGroup ChunkGroup(const std::deque<Pending>& group, std::vector<Status>& refused);
  // The batch's operations; a job's spec put comes before its row (same or earlier chunk)
  // when spec_hashes_ does not have that spec, and the job joins `new_specs`.
  std::vector<EtcdOp> OpsOf(const WriteBatch& batch, std::vector<JobId>& new_specs);
  // Commits `chunk` (its ops plus the written mark, removed again before it returns) under the
  // fence and the order of this leader's txns.
  Status CommitChunk(EtcdClient& client, Chunk& chunk);
  // The compares that hold while this store leads at `epoch`: the leader key's create
  // revision and value. Every txn of the leader carries them.
  std::vector<EtcdCompare> Fence(uint64_t epoch) const;
  // Whether a txn that failed its compares failed on the written mark only: its failure
  // branch read the leader key, still this leader's.
  bool HoldsTheFence(const EtcdTxnResult& failed, uint64_t epoch) const;
  // Reads the written mark and makes written_mod_ follow it (writer thread); returns its value.
  // Errors: the read's; kFailedPrecondition when the mark is not of this epoch.
  Result<std::string> FollowWrittenMark(EtcdClient& client, uint64_t epoch);
  // Compacts when compact_revisions passed since the last compaction (writer thread).
  void MaybeCompact(EtcdClient& client);
  void Depose(const Status& why);
  void SleepFor(std::chrono::milliseconds d);

  const EtcdOptions options_;
  const std::string url_;
  std::atomic<uint64_t> epoch_ = 0;
  std::atomic<int64_t> lease_id_ = 0;
  std::atomic<bool> keepalive_stopped_ = false;
  int64_t last_revision_ = 0;       // of the last committed txn (writer thread)
  int64_t compacted_revision_ = 0;  // of the last compaction (writer thread)
  // The written mark as this leader last knew it applied (writer thread): its epoch, its mod
  // revision, and how many txns the epoch has sent.
  uint64_t written_epoch_ = 0;
  int64_t written_mod_ = 0;
  uint64_t written_count_ = 0;

  Mutex specs_mu_{LockRank::kStoreSpecs};
  // The hash of each job's spec as its specs/ key holds it (or a txn in flight puts it).
  std::unordered_map<JobId, size_t> spec_hashes_;

  mutable Mutex mu_{LockRank::kStoreQueue};
  std::condition_variable_any cv_;          // queue, role and stop changes
  std::condition_variable_any flushed_cv_;  // committed_ grows
  Role role_ = Role::kCandidate;
  std::optional<std::string> leader_;
  std::chrono::steady_clock::time_point lease_valid_until_{};
  std::function<void(const Status&)> deposed_callback_;
  Status deposed_why_;
  std::deque<Pending> queue_;
  uint64_t queued_ = 0;
  uint64_t committed_ = 0;
  bool stopping_ = false;
  StoreStats stats_;

  // PublishAgentsHeard / RivalsAgentsHeard / Resign (one thread): their client, and what was
  // last published under which lease (put again when either changes).
  std::unique_ptr<EtcdClient> reach_client_;
  int published_heard_ = -1;
  int64_t published_lease_ = 0;

  std::thread campaigner_;
  std::thread keeper_;
  std::thread writer_;
};

}  // namespace sluice::store
