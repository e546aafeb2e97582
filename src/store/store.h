// Store: the controller's durable state (R-SRV-1, R-SRV-2, R-HA-1), an interface with two
// backends. This header documents the SQLite one (sqlite_store.cc); the etcd one is in
// store/etcd_store.h and docs/ha.md.
//
// Representation: SQLite in WAL mode (DIR/sluice.db) with four tables — `jobs` (one row per
// job: the submitted spec as JSON, its state and times, its allocation by host names, its
// admission record: sequence, enqueue time, bypass count, first-blocked time, gate, phase,
// epoch; its preemption marker; once ended, its CPU time, memory peak and message; its steps
// as JSON text),
// `hosts` (agents that registered without being in the cluster YAML), `settings` (integers
// by key: administrators' queue and host overrides, queues' reclaim deadlines),
// `reservations` (advance reservations by name, each as JSON text: server/advance_reservations.h;
// schema 3) and `meta` (controller epoch, configuration version, schema version). The store
// knows nothing of the core: rows are plain values; the server maps them to and from
// ClusterState.
//
// Invariants:
//  - one controller per directory: Open takes an exclusive flock on DIR/lock for the store's
//    lifetime; a second Open fails with kUnavailable;
//  - Open increments the epoch (on a full disk Open still succeeds, read-only until space
//    returns: the first commit that succeeds stores the epoch); every write transaction first
//    checks that the stored epoch is still this store's (fencing), else the write fails and
//    nothing is changed;
//  - a write is reported done only after its transaction committed (synchronous=FULL), so
//    whatever was acknowledged survives a crash;
//  - a database written by an older version gains the columns added since when opened;
//  - Open reads the schema version before anything else (store/schema_version.h, R-OPS-5): a
//    newer state is refused unchanged, an older one is upgraded in place before any read.
// Group commit: Write() queues a batch; one writer thread commits every batch queued so far
// in one transaction and then runs their callbacks in submission order. Batches commit in the
// order they were queued. A caller that waits for its commit anyway (a request acknowledged
// after it) may commit the queue on its own thread instead (WriteForCaller, CommitOnCaller):
// the same transactions and fsyncs, without the two thread hand-offs to the writer and back.
// Thread-safety: Write/WriteSync/Flush from any thread; Load before the first write.
// Implements R-SRV-1, R-SRV-2, R-HA-1 (with etcd_store.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/status.h"
#include "store/schema_version.h"

namespace sluice::store {

// One job row. Times are Unix seconds; 0 means "not yet".
struct StoredJob {
  JobId id = 0;
  // The submission as JSON (changed only by `modify`, R-UX-7). Written empty, on a store that
  // ServesSpecs(): the row keeps the spec it has.
  std::string spec;
  std::string state;  // PENDING, HELD, ADMITTING, RUNNING, DONE, EXIT, CANCELLED
  uint64_t seq = 0;   // enqueue sequence (admission record)
  int64_t submit_time = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  std::optional<int32_t> exit_code;
  std::string cause;       // exit cause, "" when none
  std::string allocation;  // JSON by host names, "" when none
  uint64_t start_seq = 0;  // start order of ADMITTING/RUNNING jobs
  // Admission record (R-ADM-3, seed 000): the head fields and phase.
  std::string phase;  // PENDING, ADMITTING, ADMITTED, ENDED
  int64_t enqueue_time = 0;
  std::string policy;
  int32_t bypass_count = 0;
  std::optional<int64_t> first_blocked;
  std::optional<int64_t> gate_since;
  uint64_t epoch = 0;  // epoch that last wrote the row
  int32_t dispatch_attempts = 0;
  bool cancel_requested = false;
  // Preemption in progress (R-CAP-3, R-CAP-4): this running job is being stopped so that job
  // `preempted_for` can start; SIGKILL at `preempt_kill_at`. 0: not being preempted.
  JobId preempted_for = 0;
  int64_t preempt_kill_at = 0;
  // Accounting of an ended job (R-SEC-4), as its agent measured it; absent when not reported.
  std::optional<double> cpu_seconds;
  std::optional<double> max_rss_mb;
  std::string message;  // why it ended as it did (e.g. MEM_LIMIT's limit and peak); "" none
  // A job array's row (R-UX-3): its elements' states by position, run-length encoded
  // ("12D3Q35W": 12 done, 3 queued, 35 waiting; server/job_arrays.h); "" for other rows.
  std::string array_states;
  // The job's steps (R-LAUNCH-2): each `sluice launch` inside it, as the JSON array of
  // wire/step_record.h, written whole; "" while it has none. Kept as text so that the store
  // needs no schema change when a step gains a field.
  std::string steps;
  // What its record alone would lose (issue 47.6): earlier runs ended by a requeue and the
  // changes made to it (modify, hold, release, cancel), as the JSON array of
  // server/job_events.h, written whole; "" while it has none.
  std::string events;

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
  // Job rows deleted (ended jobs past the history retention, R-HA-5), after `jobs` are written.
  std::vector<JobId> deleted_jobs;
  std::optional<int64_t> config_version;
  // Controller settings by key (e.g. "queue_open/normal"): a value sets, nullopt deletes.
  std::map<std::string, std::optional<int64_t>> settings;
  // Advance reservations by name (R-RSV-1): the JSON text sets (inserted or replaced whole),
  // nullopt deletes.
  std::map<std::string, std::optional<std::string>> reservations;

  bool empty() const {
    return jobs.empty() && hosts.empty() && deleted_jobs.empty() && !config_version &&
           settings.empty() && reservations.empty();
  }
};

struct Snapshot {
  uint64_t epoch = 0;  // this store's (new) epoch
  SchemaOpened schema;  // the schema version found at open (R-OPS-5), now kSchemaVersion
  int64_t config_version = 0;
  std::vector<StoredJob> jobs;  // by id
  std::vector<StoredHost> hosts;
  std::map<std::string, int64_t> settings;
  std::map<std::string, std::string> reservations;  // by name: the JSON text (R-RSV-1)
};

struct StoreStats {
  int64_t transactions = 0;    // commits
  int64_t batches = 0;         // Write calls committed (more than commits: group commit)
  int64_t checkpoints = 0;     // SQLite: WAL checkpoints, run after acknowledging (0 on etcd)
  int64_t caller_commits = 0;  // SQLite: transactions CommitOnCaller ran (0 on etcd)
};

// Leadership of a store (R-HA-1). A SQLite store leads from Open on (its flock is the
// election); an etcd store is a candidate until it wins the election, leads while its lease
// lives and its writes' compares hold, and is deposed for good once either fails.
enum class Role { kCandidate, kLeader, kDeposed };

struct HistoryQuery;  // store/history.h
struct HistoryPage;
std::string_view ToString(Role role);

// What OpenUrl needs besides the URL; the SQLite store ignores all of it.
struct OpenOptions {
  // Stored as the leader key's value while this store leads, so that standbys can name the
  // leader (the controller's advertised URL). Must be unique among the candidates.
  std::string candidate = "sluice";
  // The election lease (etcd rounds it up to its minimum, about 1.5 x election timeout).
  int lease_seconds = 3;
};

// The durable-state interface with two backends: SQLite (Open(dir), the default) and etcd
// (OpenUrl("etcd://..."), see store/etcd_store.h and docs/ha.md).
class Store {
 public:
  // Creates DIR if needed, takes the lock, opens or creates the database and increments the
  // epoch. Errors: kUnavailable "state directory DIR is locked by another sluice server";
  // kFailedPrecondition for a state of a newer schema (NewerSchemaError: nothing changed);
  // kInternal with SQLite's message for an unusable database.
  static Result<std::unique_ptr<Store>> Open(const std::string& dir);
  // `url` is a state directory (as Open) or `etcd://HOST:PORT[,HOST:PORT...][/PREFIX]`
  // (optionally `?max-txn-ops=N&max-request-bytes=N` matching the etcd flags). An etcd store
  // returns as a candidate that campaigns in the background: call AwaitLeadership before
  // Load and writes. Errors: kInvalidArgument for a malformed URL; Open's errors for a
  // directory; kUnavailable when no etcd endpoint answers.
  static Result<std::unique_ptr<Store>> OpenUrl(const std::string& url,
                                                const OpenOptions& options = {});
  // Commits what is queued, stops the background threads, closes the database or releases
  // the election (a leading etcd store revokes its lease so that a standby takes over now).
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The epoch this store writes under: grows with every new leader; 0 while a candidate.
  virtual uint64_t epoch() const = 0;
  // The state directory, or the etcd URL.
  virtual const std::string& dir() const = 0;

  // Reads everything (the controller calls it once, at start, after AwaitLeadership). The
  // etcd store first checks and upgrades the schema as the leader (store/etcd_schema.h):
  // kFailedPrecondition for a newer schema, with nothing changed.
  virtual Result<Snapshot> Load() = 0;
  // Load in two steps, so that a restart restores each chunk of job rows while the next is
  // read (issue 45: a million rows were a 0.5 GB vector). LoadAllButJobs is Load without
  // the job rows; ReadJobs then hands the rows whose id is in [first, last] to `take` in id
  // order, at most `chunk_rows` at a time, from the calling thread (any one thread, before
  // any write). The default (etcd) loads everything at once and hands over the rows it kept.
  virtual Result<Snapshot> LoadAllButJobs();
  virtual Status ReadJobs(JobId first, JobId last, size_t chunk_rows,
                          const std::function<void(std::vector<StoredJob>&&)>& take);

  // Queues a batch; `done` runs on the writer thread after the commit (or failure). A batch
  // is all-or-nothing. Failures: kFailedPrecondition when this store was fenced (another
  // leader, a newer epoch) — nothing was written and no later write will succeed;
  // kUnavailable when the store cannot commit now (no quorum, no endpoint) — the batch was
  // not acknowledged (with etcd its effect may still appear, see docs/ha.md) and later
  // writes may succeed; kResourceExhausted when the disk is full or failed (SQLite: full,
  // I/O error; etcd: its space quota, "database space exceeded") — nothing was written and
  // later writes succeed once space returns; kInvalidArgument when a batch exceeds the store's
  // transaction limits.
  virtual void Write(WriteBatch batch, std::function<void(const Status&)> done) = 0;
  // Queues a batch as Write does, in the same order, but does not wake the writer thread: the
  // caller must call CommitOnCaller() next, holding no lock that a `done` takes. That commits
  // every queued batch in one transaction on the caller's thread (their `done`s run there) if
  // no commit is under way; otherwise the writer thread commits them after the current one.
  // Backends without a writer of their own to spare (etcd) just Write.
  virtual void WriteForCaller(WriteBatch batch, std::function<void(const Status&)> done) {
    Write(std::move(batch), std::move(done));
  }
  virtual void CommitOnCaller() {}
  // Queues a batch and waits for its commit.
  Status WriteSync(WriteBatch batch);
  // Waits until everything queued so far is committed (or failed).
  virtual void Flush() = 0;

  virtual StoreStats stats() const = 0;

  // Leadership (R-HA-1). Blocks until this store leads or `timeout` passes (kUnavailable), or
  // it is deposed (kFailedPrecondition). The SQLite store returns Ok at once.
  virtual Status AwaitLeadership(std::chrono::milliseconds timeout) = 0;
  virtual Role role() const = 0;
  // The current leader's `OpenOptions::candidate` as last seen, nullopt when none is known.
  virtual std::optional<std::string> leader() const = 0;
  // `deposed` runs once, on a background thread, when this store stops leading for good
  // (lease lost or a write's compare failed), with the reason. Set it before leading. It may
  // run on the writer thread: it must not wait for writes (Flush, WriteSync).
  virtual void SetDeposedCallback(std::function<void(const Status&)> deposed) = 0;

  // Which controller reaches the agents (issue 44; the etcd store, one calling thread). A
  // standby publishes how many agents reached it lately, kept under its own election lease
  // (so it goes with the standby); the leader reads its rivals' counts and may give the lead
  // up (Resign) when they reach agents it cannot. SQLite: one controller, nothing to say.
  virtual void PublishAgentsHeard(int /*count*/) {}
  virtual std::vector<int> RivalsAgentsHeard() { return {}; }
  // Gives the lead up now: revokes the election lease (a rival takes over at once, as after a
  // clean stop) and is deposed with `why` (the deposed callback runs).
  virtual void Resign(const Status& /*why*/) {}

  // For tests of fencing: overwrite the stored epoch as a rival controller would (SQLite
  // only; the etcd store answers kFailedPrecondition: a rival there is a second store).
  virtual Status OverwriteEpochForTest(uint64_t epoch) = 0;

  // --- Specs on demand (issue 45). From any thread. ---
  // True when ReadSpec serves the spec of every stored row (SQLite), so the controller keeps
  // a job's spec text only until a write carrying it committed. A job row written with an
  // empty spec then keeps the spec stored with it (it updates the row, and inserts none when
  // there is no row). False (etcd): rows always carry their spec, the controller keeps them.
  virtual bool ServesSpecs() const { return false; }
  // The committed spec of job `id`. Errors: kNotFound when no row has that id;
  // kFailedPrecondition when !ServesSpecs(); the backend's read errors.
  virtual Result<std::string> ReadSpec(JobId id);

  // --- History (R-UX-6; store/history.h). From any thread, while leading. ---
  // One page of ended jobs matching `query`. The default scans Load() (the etcd store);
  // SQLite answers from its indexes. Errors: the backend's read errors.
  virtual Result<HistoryPage> QueryHistory(const HistoryQuery& query);
  // Deletes at most `max_rows` rows of jobs that ended before `ended_before` (Unix seconds),
  // fenced like a write; returns how many went. The default deletes nothing (etcd keeps its
  // history; docs/api.md). Errors: kFailedPrecondition when fenced; the backend's errors.
  virtual Result<int64_t> PurgeHistory(int64_t ended_before, int64_t max_rows);
  // True when PurgeHistory deletes rows (SQLite): the server's HistoryKeeper then keeps the
  // retention (--keep-history-days) and the controller queues no deletes of its own.
  virtual bool PurgesHistory() const { return false; }

 protected:
  Store() = default;

 private:
  std::vector<StoredJob> unread_jobs_;  // the default LoadAllButJobs's rows, for ReadJobs
};

}  // namespace sluice::store
