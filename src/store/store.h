// Store: the controller's durable state in a state directory (R-SRV-1, R-SRV-2).
//
// Representation: SQLite in WAL mode (DIR/sluice.db) with four tables — `jobs` (one row per
// job: the submitted spec as JSON, its state and times, its allocation by host names, its
// admission record: sequence, enqueue time, bypass count, first-blocked time, gate, phase,
// epoch; and its preemption marker), `hosts` (agents that registered without being in the
// cluster YAML), `settings` (integers by key: administrators' queue and host overrides,
// queues' reclaim deadlines) and `meta` (controller epoch, configuration version). The store
// knows nothing of the core: rows are plain values; the server maps them to and from
// ClusterState.
//
// Invariants:
//  - one controller per directory: Open takes an exclusive flock on DIR/lock for the store's
//    lifetime; a second Open fails with kUnavailable;
//  - Open increments the epoch; every write transaction first checks that the stored epoch
//    is still this store's (fencing), else the write fails and nothing is changed;
//  - a write is reported done only after its transaction committed (synchronous=FULL), so
//    whatever was acknowledged survives a crash;
//  - a database written by an older version gains the columns added since when opened.
// Group commit: Write() queues a batch; one writer thread commits every batch queued so far
// in one transaction and then runs their callbacks in submission order. Batches commit in the
// order they were queued.
// Thread-safety: Write/WriteSync/Flush from any thread; Load before the first write.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/status.h"

namespace sluice::store {

// One job row. Times are Unix seconds; 0 means "not yet".
struct StoredJob {
  JobId id = 0;
  std::string spec;         // the submission as JSON (immutable)
  std::string state;        // PENDING, HELD, ADMITTING, RUNNING, DONE, EXIT, CANCELLED
  uint64_t seq = 0;         // enqueue sequence (admission record)
  int64_t submit_time = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  std::optional<int32_t> exit_code;
  std::string cause;        // exit cause, "" when none
  std::string allocation;   // JSON by host names, "" when none
  uint64_t start_seq = 0;   // start order of ADMITTING/RUNNING jobs
  // Admission record (R-ADM-3, seed 000): the head fields and phase.
  std::string phase;        // PENDING, ADMITTING, ADMITTED, ENDED
  int64_t enqueue_time = 0;
  std::string policy;
  int32_t bypass_count = 0;
  std::optional<int64_t> first_blocked;
  std::optional<int64_t> gate_since;
  uint64_t epoch = 0;       // epoch that last wrote the row
  int32_t dispatch_attempts = 0;
  bool cancel_requested = false;
  // Preemption in progress (R-CAP-3, R-CAP-4): this running job is being stopped so that job
  // `preempted_for` can start; SIGKILL at `preempt_kill_at`. 0: not being preempted.
  JobId preempted_for = 0;
  int64_t preempt_kill_at = 0;

  friend bool operator==(const StoredJob&, const StoredJob&) = default;
};

// A host added by an agent's registration (not in the cluster YAML).
struct StoredHost {
  std::string name;
  std::string spec;  // JSON
  friend bool operator==(const StoredHost&, const StoredHost&) = default;
};

struct WriteBatch {
  std::vector<StoredJob> jobs;    // inserted or replaced whole
  std::vector<StoredHost> hosts;  // inserted or replaced whole
  std::optional<int64_t> config_version;
  // Controller settings by key (e.g. "queue_open/normal"): a value sets, nullopt deletes.
  std::map<std::string, std::optional<int64_t>> settings;

  bool empty() const { return jobs.empty() && hosts.empty() && !config_version && settings.empty(); }
};

struct Snapshot {
  uint64_t epoch = 0;  // this store's (new) epoch
  int64_t config_version = 0;
  std::vector<StoredJob> jobs;  // by id
  std::vector<StoredHost> hosts;
  std::map<std::string, int64_t> settings;
};

struct StoreStats {
  int64_t transactions = 0;
  int64_t batches = 0;
};

class Store {
 public:
  // Creates DIR if needed, takes the lock, opens or creates the database and increments the
  // epoch. Errors: kUnavailable "state directory DIR is locked by another sluice server";
  // kInternal with SQLite's message for an unusable database.
  static Result<std::unique_ptr<Store>> Open(const std::string& dir);
  // Commits what is queued, stops the writer, closes the database, releases the lock.
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  uint64_t epoch() const { return epoch_; }
  const std::string& dir() const { return dir_; }

  // Reads everything (the controller calls it once, at start).
  Result<Snapshot> Load();

  // Queues a batch; `done` runs on the writer thread after the commit (or failure).
  void Write(WriteBatch batch, std::function<void(const Status&)> done);
  // Queues a batch and waits for its commit.
  Status WriteSync(WriteBatch batch);
  // Waits until everything queued so far is committed.
  void Flush();

  StoreStats stats() const;

  // For tests of fencing: overwrite the stored epoch as a rival controller would.
  Status OverwriteEpochForTest(uint64_t epoch);

  class Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl, std::string dir, uint64_t epoch);
  std::unique_ptr<Impl> impl_;
  std::string dir_;
  uint64_t epoch_ = 0;
};

}  // namespace sluice::store
