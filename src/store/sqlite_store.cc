// SQLite backend of Store (see store.h). One connection, used by Open/Load on the
// caller's thread before the writer starts, then by one committing thread at a time: the
// writer, or a request's thread committing its own batch (CommitOnCaller).
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "store/sqlite_exec.h"
#include "store/sqlite_history.h"
#include "store/sqlite_schema.h"
#include "store/sqlite_spec_reader.h"
#include "store/store.h"

namespace sluice::store {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY,
  spec TEXT NOT NULL,
  state TEXT NOT NULL,
  seq INTEGER NOT NULL,
  submit_time INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  exit_code INTEGER,
  cause TEXT NOT NULL,
  allocation TEXT NOT NULL,
  start_seq INTEGER NOT NULL,
  phase TEXT NOT NULL,
  enqueue_time INTEGER NOT NULL,
  policy TEXT NOT NULL,
  bypass_count INTEGER NOT NULL,
  first_blocked INTEGER,
  gate_since INTEGER,
  epoch INTEGER NOT NULL,
  dispatch_attempts INTEGER NOT NULL,
  cancel_requested INTEGER NOT NULL,
  preempted_for INTEGER NOT NULL DEFAULT 0,
  preempt_kill_at INTEGER NOT NULL DEFAULT 0,
  cpu_seconds REAL,
  max_rss_mb REAL,
  message TEXT NOT NULL DEFAULT '',
  array_states TEXT NOT NULL DEFAULT '',
  steps TEXT NOT NULL DEFAULT '',
  events TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS hosts (name TEXT PRIMARY KEY, spec TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS reservations (name TEXT PRIMARY KEY, spec TEXT NOT NULL);
)sql";

constexpr const char* kUpsertJob =
    "INSERT OR REPLACE INTO jobs (id, spec, state, seq, submit_time, start_time, end_time, "
    "exit_code, cause, allocation, start_seq, phase, enqueue_time, policy, bypass_count, "
    "first_blocked, gate_since, epoch, dispatch_attempts, cancel_requested, preempted_for, "
    "preempt_kill_at, cpu_seconds, max_rss_mb, message, array_states, steps, events) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
    "?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)";

// A row written without its spec keeps the stored one (Store::ServesSpecs): the same
// parameters as kUpsertJob, ?2 unused. It inserts nothing when the row is gone (an ended job
// whose history was purged): a row without its spec would be unreadable at the next start.
constexpr const char* kUpdateJob =
    "UPDATE jobs SET state = ?3, seq = ?4, submit_time = ?5, start_time = ?6, end_time = ?7, "
    "exit_code = ?8, cause = ?9, allocation = ?10, start_seq = ?11, phase = ?12, "
    "enqueue_time = ?13, policy = ?14, bypass_count = ?15, first_blocked = ?16, "
    "gate_since = ?17, epoch = ?18, dispatch_attempts = ?19, cancel_requested = ?20, "
    "preempted_for = ?21, preempt_kill_at = ?22, cpu_seconds = ?23, max_rss_mb = ?24, "
    "message = ?25, array_states = ?26, steps = ?27, events = ?28 WHERE id = ?1";

// Columns added after the first schema: ALTER TABLE adds those an older database lacks.
struct AddedColumn {
  const char* name;
  const char* definition;
};
constexpr AddedColumn kAddedJobColumns[] = {
    {"preempted_for", "INTEGER NOT NULL DEFAULT 0"},
    {"preempt_kill_at", "INTEGER NOT NULL DEFAULT 0"},
    {"cpu_seconds", "REAL"},
    {"max_rss_mb", "REAL"},
    {"message", "TEXT NOT NULL DEFAULT ''"},
    {"array_states", "TEXT NOT NULL DEFAULT ''"},
    {"steps", "TEXT NOT NULL DEFAULT ''"},
    {"events", "TEXT NOT NULL DEFAULT ''"},
};

void BindOptionalDouble(sqlite3_stmt* s, int index, const std::optional<double>& value) {
  if (value) {
    sqlite3_bind_double(s, index, *value);
  } else {
    sqlite3_bind_null(s, index);
  }
}

void BindOptionalInt(sqlite3_stmt* s, int index, const std::optional<int64_t>& value) {
  if (value) {
    sqlite3_bind_int64(s, index, *value);
  } else {
    sqlite3_bind_null(s, index);
  }
}

void BindText(sqlite3_stmt* s, int index, const std::string& text) {
  sqlite3_bind_text(s, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
}

// Binds `j` to kUpsertJob's or kUpdateJob's parameters (the texts are not copied: `j` must
// outlive the step).
void BindJob(sqlite3_stmt* s, const StoredJob& j) {
  sqlite3_reset(s);
  sqlite3_bind_int64(s, 1, j.id);
  BindText(s, 2, j.spec);
  BindText(s, 3, j.state);
  sqlite3_bind_int64(s, 4, static_cast<int64_t>(j.seq));
  sqlite3_bind_int64(s, 5, j.submit_time);
  sqlite3_bind_int64(s, 6, j.start_time);
  sqlite3_bind_int64(s, 7, j.end_time);
  BindOptionalInt(s, 8, j.exit_code);
  BindText(s, 9, j.cause);
  BindText(s, 10, j.allocation);
  sqlite3_bind_int64(s, 11, static_cast<int64_t>(j.start_seq));
  BindText(s, 12, j.phase);
  sqlite3_bind_int64(s, 13, j.enqueue_time);
  BindText(s, 14, j.policy);
  sqlite3_bind_int64(s, 15, j.bypass_count);
  BindOptionalInt(s, 16, j.first_blocked);
  BindOptionalInt(s, 17, j.gate_since);
  sqlite3_bind_int64(s, 18, static_cast<int64_t>(j.epoch));
  sqlite3_bind_int64(s, 19, j.dispatch_attempts);
  sqlite3_bind_int64(s, 20, j.cancel_requested ? 1 : 0);
  sqlite3_bind_int64(s, 21, j.preempted_for);
  sqlite3_bind_int64(s, 22, j.preempt_kill_at);
  BindOptionalDouble(s, 23, j.cpu_seconds);
  BindOptionalDouble(s, 24, j.max_rss_mb);
  BindText(s, 25, j.message);
  BindText(s, 26, j.array_states);
  BindText(s, 27, j.steps);
  BindText(s, 28, j.events);
}

std::optional<double> OptionalDouble(sqlite3_stmt* s, int col) {
  if (sqlite3_column_type(s, col) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(s, col);
}

struct Pending {
  WriteBatch batch;
  std::function<void(const Status&)> done;
};

// The WAL is checkpointed into the database by the writer thread after it has acknowledged a
// group, not inside a COMMIT (SQLite's autocheckpoint would run it there, so the submission
// that crossed the mark waited for two more fsyncs): at kCheckpointFrames when nothing waits
// to be written, and at kForceCheckpointFrames even when a busy queue never empties.
constexpr int kCheckpointFrames = 1000;  // SQLite's autocheckpoint default (~4 MB)
constexpr int kForceCheckpointFrames = 4 * kCheckpointFrames;

// The WAL's first kWalPreallocBytes are written (zeros) before the first commit. A commit
// then writes over allocated blocks, and its fdatasync flushes data only; while the WAL
// grows, each commit's fdatasync must also commit the filesystem's journal (the new size and
// blocks), which waits behind whatever else the machine writes (issue 21, measured in
// docs/performance.md). SQLite restarts the WAL at its start after a complete checkpoint
// (MaybeCheckpoint, at kCheckpointFrames), so it stays within this size while checkpoints
// keep up. Zeros after the WAL's valid frames are ignored (their salt and checksum do not
// match), by recovery too. Skipped, as a mere speed-up, on a disk with little free space
// (a small tmpfs in tests of a full disk); undone if the disk fills meanwhile.
constexpr int64_t kWalFrameBytes = 4096 + 24;  // the default page size plus a frame header
constexpr int64_t kWalPreallocBytes = 2 * kCheckpointFrames * kWalFrameBytes;  // ~8 MB

void PreallocateWal(sqlite3* db, const std::string& dir) {
  struct statvfs disk {};
  if (statvfs(dir.c_str(), &disk) != 0 ||
      static_cast<int64_t>(disk.f_bavail) * static_cast<int64_t>(disk.f_frsize) <
          64 * kWalPreallocBytes) {
    return;
  }
  sqlite3_file* wal = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
      wal == nullptr || wal->pMethods == nullptr) {
    return;  // no WAL open (not in WAL mode)
  }
  sqlite3_int64 size = 0;
  if (wal->pMethods->xFileSize(wal, &size) != SQLITE_OK || size >= kWalPreallocBytes) return;
  // 64 KB at a time: the unix VFS keeps only the low 17 bits of a write's length (a 256 KB
  // write wrote nothing).
  const std::string zeros(64 * 1024, '\0');
  const sqlite3_int64 original = size;
  while (size < kWalPreallocBytes) {
    const sqlite3_int64 chunk = static_cast<sqlite3_int64>(zeros.size());
    const int n = static_cast<int>(std::min(chunk, kWalPreallocBytes - size));
    if (wal->pMethods->xWrite(wal, zeros.data(), n, size) != SQLITE_OK) {
      (void)wal->pMethods->xTruncate(wal, original);  // the space back: commits need it more
      return;
    }
    size += n;
  }
  (void)wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
}

}  // namespace

class SqliteWriter {
 public:
  // `epoch_stored`: false when Open could not store the new epoch (a full disk): the first
  // commit then stores it (the stored one must still be epoch - 1).
  SqliteWriter(sqlite3* db, int lock_fd, uint64_t epoch, bool epoch_stored)
      : db_(db), lock_fd_(lock_fd), epoch_(epoch), epoch_stored_(epoch_stored) {}

  ~SqliteWriter() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable()) writer_.join();
    sqlite3_finalize(upsert_job_);
    sqlite3_finalize(update_job_);
    sqlite3_finalize(upsert_host_);
    sqlite3_finalize(read_epoch_);
    sqlite3_finalize(upsert_setting_);
    sqlite3_finalize(delete_setting_);
    sqlite3_finalize(upsert_reservation_);
    sqlite3_finalize(delete_reservation_);
    sqlite3_close(db_);
    if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
  }

  Status Prepare() {
    if (sqlite3_prepare_v2(db_, kUpsertJob, -1, &upsert_job_, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, kUpdateJob, -1, &update_job_, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO hosts (name, spec) VALUES (?1, ?2)", -1,
                           &upsert_host_, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key = 'epoch'", -1, &read_epoch_,
                           nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO settings (key, value) VALUES (?1, ?2)", -1,
                           &upsert_setting_, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "DELETE FROM settings WHERE key = ?1", -1, &delete_setting_,
                           nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO reservations (name, spec) VALUES (?1, ?2)",
                           -1, &upsert_reservation_, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "DELETE FROM reservations WHERE name = ?1", -1,
                           &delete_reservation_, nullptr) != SQLITE_OK) {
      return SqlError(db_, "preparing statements");
    }
    // Replaces the autocheckpoint on this connection: MaybeCheckpoint runs it instead.
    sqlite3_wal_hook(db_, &SqliteWriter::OnWalCommit, this);
    return Status::Ok();
  }

  void Start() {
    writer_ = std::thread([this] { Run(); });
  }

  // `wake`: false for WriteForCaller, whose caller commits next (CommitOnCaller).
  void Enqueue(WriteBatch batch, std::function<void(const Status&)> done, bool wake) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(Pending{std::move(batch), std::move(done)});
      ++queued_;
    }
    if (wake) cv_.notify_all();
  }

  // Commits what is queued on this thread unless a commit (the writer's or another caller's)
  // is under way; that one's owner leaves the rest to the writer thread when it ends.
  void CommitOnCaller() {
    std::unique_lock lock(mu_);
    if (committing_ || queue_.empty()) return;
    CommitGroup(lock);
    ++stats_.caller_commits;
    // The writer takes what was queued meanwhile, and the checkpoint (MaybeCheckpoint).
    if (!queue_.empty() || wal_frames_ >= kCheckpointFrames || stopping_) cv_.notify_all();
  }

  void Flush() {
    std::unique_lock lock(mu_);
    const uint64_t target = queued_;
    cv_.notify_all();  // a WriteForCaller batch whose caller has not committed yet
    flushed_cv_.wait(lock, [&] { return committed_ >= target; });
  }

  StoreStats stats() {
    std::lock_guard lock(mu_);
    return stats_;
  }

  sqlite3* db() { return db_; }

 private:
  void Run() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] {
        return !committing_ && (stopping_ || !queue_.empty() || wal_frames_ >= kCheckpointFrames);
      });
      if (queue_.empty() && stopping_) return;
      if (!queue_.empty()) CommitGroup(lock);
      MaybeCheckpoint(lock);
    }
  }

  // REQUIRES: `lock` holds mu_, no commit under way. Commits every queued batch in one
  // transaction on this thread, runs their callbacks in order, then counts them committed.
  // `committing_` keeps the connection to one thread at a time (it is opened NOMUTEX).
  // noexcept: a callback that throws (controller code) ends the process, as it did when
  // only the writer thread committed; caught by a request thread's HTTP handler instead, it
  // would leave `committing_` set and no later batch would ever commit.
  void CommitGroup(MutexLock& lock) noexcept {
    committing_ = true;
    std::deque<Pending> group;
    group.swap(queue_);
    lock.unlock();
    Status status = Commit(group);
    lock.lock();
    stats_.transactions += 1;
    stats_.batches += static_cast<int64_t>(group.size());
    lock.unlock();
    for (Pending& p : group) {
      if (p.done) p.done(status);
    }
    lock.lock();
    committed_ += group.size();
    committing_ = false;
    flushed_cv_.notify_all();
  }

  // Called by SQLite on the committing thread after each commit: the WAL's length.
  static int OnWalCommit(void* self, sqlite3* /*db*/, const char* /*name*/, int frames) {
    static_cast<SqliteWriter*>(self)->wal_frames_ = frames;
    return SQLITE_OK;
  }

  // REQUIRES: `lock` holds mu_. A PASSIVE checkpoint (it never waits for the history
  // connection's readers); the next commit after a complete one starts the WAL over, writing
  // over the file's blocks instead of growing it.
  void MaybeCheckpoint(MutexLock& lock) {
    if (wal_frames_ < kCheckpointFrames) return;
    if (!queue_.empty() && wal_frames_ < kForceCheckpointFrames) return;
    committing_ = true;  // the connection is the checkpoint's until it ends
    lock.unlock();
    int log = 0;
    int done = 0;
    const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    lock.lock();
    committing_ = false;
    wal_frames_ = 0;  // the next commit tells the WAL's length again
    if (rc == SQLITE_OK) ++stats_.checkpoints;
  }

  Status Commit(std::deque<Pending>& group) {
    SLUICE_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE"));
    Status status = CheckEpoch();
    for (Pending& p : group) {
      if (!status.ok()) break;
      status = Apply(p.batch);
    }
    if (status.ok()) status = Exec(db_, "COMMIT");
    // A failed COMMIT (a full disk) may leave the transaction open: nothing of it stays.
    if (!status.ok()) {
      if (sqlite3_get_autocommit(db_) == 0) (void)Exec(db_, "ROLLBACK");
      return status;
    }
    epoch_stored_ = true;
    return status;
  }

  Status CheckEpoch() {
    sqlite3_reset(read_epoch_);
    if (sqlite3_step(read_epoch_) != SQLITE_ROW) return SqlError(db_, "reading the epoch");
    const uint64_t stored = static_cast<uint64_t>(sqlite3_column_int64(read_epoch_, 0));
    sqlite3_reset(read_epoch_);
    if (!epoch_stored_ && stored + 1 == epoch_) {
      const std::string bump = "INSERT OR REPLACE INTO meta (key, value) VALUES ('epoch', " +
                               std::to_string(epoch_) + ")";
      return Exec(db_, bump.c_str());
    }
    if (stored != epoch_) {
      return Status(StatusCode::kFailedPrecondition,
                    "epoch " + std::to_string(epoch_) + " is fenced: the state directory is at " +
                        "epoch " + std::to_string(stored) + " (another controller wrote it)");
    }
    return Status::Ok();
  }

  Status Apply(const WriteBatch& batch) {
    for (const StoredJob& j : batch.jobs) {
      sqlite3_stmt* s = j.spec.empty() ? update_job_ : upsert_job_;
      BindJob(s, j);
      if (sqlite3_step(s) != SQLITE_DONE)
        return SqlError(db_, "writing job " + std::to_string(j.id));
    }
    for (JobId id : batch.deleted_jobs) {
      const std::string sql = "DELETE FROM jobs WHERE id = " + std::to_string(id);
      SLUICE_RETURN_IF_ERROR(Exec(db_, sql.c_str()));
    }
    for (const StoredHost& h : batch.hosts) {
      sqlite3_stmt* s = upsert_host_;
      sqlite3_reset(s);
      sqlite3_bind_text(s, 1, h.name.data(), static_cast<int>(h.name.size()), SQLITE_STATIC);
      sqlite3_bind_text(s, 2, h.spec.data(), static_cast<int>(h.spec.size()), SQLITE_STATIC);
      if (sqlite3_step(s) != SQLITE_DONE) return SqlError(db_, "writing host " + h.name);
    }
    for (const auto& [key, value] : batch.settings) {
      sqlite3_stmt* s = value ? upsert_setting_ : delete_setting_;
      sqlite3_reset(s);
      sqlite3_bind_text(s, 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
      if (value) sqlite3_bind_int64(s, 2, *value);
      if (sqlite3_step(s) != SQLITE_DONE) return SqlError(db_, "writing setting " + key);
    }
    for (const auto& [name, spec] : batch.reservations) {
      sqlite3_stmt* s = spec ? upsert_reservation_ : delete_reservation_;
      sqlite3_reset(s);
      sqlite3_bind_text(s, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
      if (spec) sqlite3_bind_text(s, 2, spec->data(), static_cast<int>(spec->size()), SQLITE_STATIC);
      if (sqlite3_step(s) != SQLITE_DONE) return SqlError(db_, "writing reservation " + name);
    }
    if (batch.config_version) {
      const std::string sql =
          "INSERT OR REPLACE INTO meta (key, value) VALUES ('config_version', " +
          std::to_string(*batch.config_version) + ")";
      SLUICE_RETURN_IF_ERROR(Exec(db_, sql.c_str()));
    }
    return Status::Ok();
  }

  sqlite3* db_;
  int lock_fd_;
  uint64_t epoch_;
  bool epoch_stored_ = true;
  sqlite3_stmt* upsert_job_ = nullptr;
  sqlite3_stmt* update_job_ = nullptr;  // a row written without its spec (kUpdateJob)
  sqlite3_stmt* upsert_host_ = nullptr;
  sqlite3_stmt* read_epoch_ = nullptr;
  sqlite3_stmt* upsert_setting_ = nullptr;
  sqlite3_stmt* delete_setting_ = nullptr;
  sqlite3_stmt* upsert_reservation_ = nullptr;
  sqlite3_stmt* delete_reservation_ = nullptr;
  std::thread writer_;
  Mutex mu_{LockRank::kStoreQueue};
  std::condition_variable_any cv_;
  std::condition_variable_any flushed_cv_;
  std::deque<Pending> queue_;
  uint64_t queued_ = 0;
  uint64_t committed_ = 0;
  bool stopping_ = false;
  bool committing_ = false;  // a commit or checkpoint holds the connection
  // Set by the committing thread without mu_ (OnWalCommit), read under it.
  std::atomic<int> wal_frames_ = 0;
  StoreStats stats_;
};

namespace {

Result<int64_t> ReadMeta(sqlite3* db, const char* key, int64_t fallback) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &s, nullptr) !=
      SQLITE_OK) {
    return SqlError(db, "reading meta");
  }
  sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
  int64_t value = fallback;
  if (sqlite3_step(s) == SQLITE_ROW) value = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return value;
}

Status AddMissingColumns(sqlite3* db) {
  std::set<std::string> have;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA table_info(jobs)", -1, &s, nullptr) != SQLITE_OK) {
    return SqlError(db, "reading the jobs table's columns");
  }
  while (sqlite3_step(s) == SQLITE_ROW) {
    const unsigned char* name = sqlite3_column_text(s, 1);
    if (name != nullptr) have.insert(reinterpret_cast<const char*>(name));
  }
  sqlite3_finalize(s);
  for (const AddedColumn& column : kAddedJobColumns) {
    if (have.contains(column.name)) continue;
    const std::string sql =
        std::string("ALTER TABLE jobs ADD COLUMN ") + column.name + " " + column.definition;
    SLUICE_RETURN_IF_ERROR(Exec(db, sql.c_str()));
  }
  return Status::Ok();
}

std::optional<int64_t> OptionalInt(sqlite3_stmt* s, int col) {
  if (sqlite3_column_type(s, col) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(s, col);
}

}  // namespace

// The SQLite backend: the writer above plus the directory and its epoch. It leads from Open
// on: the flock on DIR/lock is its election.
class SqliteStore final : public Store {
 public:
  SqliteStore(std::unique_ptr<SqliteWriter> impl, std::string dir, uint64_t epoch,
              SchemaOpened schema)
      : impl_(std::move(impl)), dir_(std::move(dir)), epoch_(epoch), schema_(schema) {}

  uint64_t epoch() const override { return epoch_; }
  const std::string& dir() const override { return dir_; }
  Result<Snapshot> Load() override;
  Result<Snapshot> LoadAllButJobs() override;
  Status ReadJobs(JobId first, JobId last, size_t chunk_rows,
                  const std::function<void(std::vector<StoredJob>&&)>& take) override;
  void Write(WriteBatch batch, std::function<void(const Status&)> done) override {
    impl_->Enqueue(std::move(batch), std::move(done), /*wake=*/true);
  }
  void WriteForCaller(WriteBatch batch, std::function<void(const Status&)> done) override {
    impl_->Enqueue(std::move(batch), std::move(done), /*wake=*/false);
  }
  void CommitOnCaller() override { impl_->CommitOnCaller(); }
  void Flush() override { impl_->Flush(); }
  StoreStats stats() const override { return impl_->stats(); }
  Status AwaitLeadership(std::chrono::milliseconds /*timeout*/) override { return Status::Ok(); }
  Role role() const override { return Role::kLeader; }
  std::optional<std::string> leader() const override { return std::nullopt; }
  // Fencing is checked at each write (the epoch row); a fenced write fails, and the server
  // learns it from that write's Status, so there is no separate signal to give.
  void SetDeposedCallback(std::function<void(const Status&)> /*deposed*/) override {}
  Status OverwriteEpochForTest(uint64_t epoch) override;
  Result<HistoryPage> QueryHistory(const HistoryQuery& query) override {
    return history_->Query(query);
  }
  Result<int64_t> PurgeHistory(int64_t ended_before, int64_t max_rows) override {
    return history_->Purge(ended_before, max_rows);
  }
  bool PurgesHistory() const override { return true; }
  bool ServesSpecs() const override { return true; }
  Result<std::string> ReadSpec(JobId id) override { return specs_->Read(id); }
  void SetReaders(std::unique_ptr<SqliteHistory> history, std::unique_ptr<SqliteSpecReader> specs) {
    history_ = std::move(history);
    specs_ = std::move(specs);
  }

 private:
  // Each on its own connection, closed after the writer's (declared first: destroyed last).
  std::unique_ptr<SqliteHistory> history_;  // history.h
  std::unique_ptr<SqliteSpecReader> specs_;  // sqlite_spec_reader.h
  std::unique_ptr<SqliteWriter> impl_;
  std::string dir_;
  uint64_t epoch_ = 0;
  SchemaOpened schema_;
};

Result<std::unique_ptr<Store>> Store::Open(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status(StatusCode::kUnavailable, "cannot create state directory " + dir);
  }
  const std::string lock_path = dir + "/lock";
  int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status(StatusCode::kUnavailable, "cannot open " + lock_path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return Status(StatusCode::kUnavailable,
                  "state directory " + dir + " is locked by another sluice server");
  }
  sqlite3* db = nullptr;
  const std::string db_path = dir + "/sluice.db";
  if (sqlite3_open_v2(db_path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    Status status = SqlError(db, "opening " + db_path);
    sqlite3_close(db);
    close(fd);
    return status;
  }
  // 1. The schema version first, read only: a newer state is refused unchanged (R-OPS-5).
  const std::string where = "state directory " + dir;
  Result<int> schema = ReadSqliteSchema(db, where);
  if (schema && *schema > kSchemaVersion) schema = NewerSchemaError(where, *schema);
  if (!schema) {
    sqlite3_close(db);
    close(fd);
    return schema.error();
  }
  // The WAL's files stay when the database closes, so that a restart on a full disk can
  // still open and read it (creating them needs space).
  int persist_wal = 1;
  sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist_wal);
  bool epoch_stored = true;
  auto setup = [&]() -> Result<uint64_t> {
    // WAL: readers never block the writer; synchronous=FULL: a commit survives power loss.
    SLUICE_RETURN_IF_ERROR(Exec(db, "PRAGMA journal_mode=WAL"));
    SLUICE_RETURN_IF_ERROR(Exec(db, "PRAGMA synchronous=FULL"));
    SLUICE_RETURN_IF_ERROR(Exec(db, "PRAGMA busy_timeout=5000"));
    SLUICE_RETURN_IF_ERROR(Exec(db, kSchema));
    SLUICE_RETURN_IF_ERROR(AddMissingColumns(db));
    SLUICE_RETURN_IF_ERROR(CreateHistoryIndexes(db));
    // 2. The migrations, before anything reads the rows.
    SLUICE_RETURN_IF_ERROR(UpgradeSqliteSchema(db, *schema, where));
    Result<int64_t> old_epoch = ReadMeta(db, "epoch", 0);
    if (!old_epoch) return old_epoch.error();
    const uint64_t next = static_cast<uint64_t>(*old_epoch) + 1;
    const std::string bump =
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('epoch', " + std::to_string(next) + ")";
    Status bumped = Exec(db, bump.c_str());
    // A full disk: open read-only for now; the first commit that succeeds stores the epoch.
    if (bumped.code() == StatusCode::kResourceExhausted) {
      epoch_stored = false;
      return next;
    }
    SLUICE_RETURN_IF_ERROR(bumped);
    return next;
  };
  Result<uint64_t> epoch_or = setup();
  if (!epoch_or) {
    sqlite3_close(db);
    close(fd);
    return epoch_or.error();
  }
  const uint64_t epoch = *epoch_or;
  PreallocateWal(db, dir);
  auto real = std::make_unique<SqliteWriter>(db, fd, epoch, epoch_stored);
  SLUICE_RETURN_IF_ERROR(real->Prepare());
  real->Start();
  Result<std::unique_ptr<SqliteHistory>> history = SqliteHistory::Open(db_path, epoch);
  if (!history) return history.error();
  Result<std::unique_ptr<SqliteSpecReader>> specs = SqliteSpecReader::Open(db_path);
  if (!specs) return specs.error();
  auto store = std::make_unique<SqliteStore>(std::move(real), dir, epoch,
                                             SchemaOpened{.found = *schema});
  store->SetReaders(std::move(*history), std::move(*specs));
  return std::unique_ptr<Store>(std::move(store));
}

Result<Snapshot> SqliteStore::Load() {
  Result<Snapshot> snap = LoadAllButJobs();
  if (!snap) return snap;
  sqlite3* db = impl_->db();
  sqlite3_stmt* s = nullptr;
  // The rows' vector sized once: growing it by doubling moved every row a few times (7 % of
  // a restart's CPU at 100,000 jobs, issue 45).
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM jobs", -1, &s, nullptr) != SQLITE_OK) {
    return SqlError(db, "counting jobs");
  }
  if (sqlite3_step(s) == SQLITE_ROW) {
    snap->jobs.reserve(static_cast<size_t>(std::max<int64_t>(0, sqlite3_column_int64(s, 0))));
  }
  sqlite3_finalize(s);
  SLUICE_RETURN_IF_ERROR(
      ReadJobs(0, std::numeric_limits<JobId>::max(), 4096, [&](std::vector<StoredJob>&& rows) {
        for (StoredJob& row : rows) snap->jobs.push_back(std::move(row));
      }));
  return snap;
}

Result<Snapshot> SqliteStore::LoadAllButJobs() {
  sqlite3* db = impl_->db();
  Flush();
  Snapshot snap;
  snap.epoch = epoch_;
  snap.schema = schema_;
  Result<int64_t> version = ReadMeta(db, "config_version", 0);
  if (!version) return version.error();
  snap.config_version = *version;
  // NOTE: runs on the caller's thread while the writer is idle (Load precedes writes).
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT name, spec FROM hosts ORDER BY rowid", -1, &s, nullptr) !=
      SQLITE_OK) {
    return SqlError(db, "reading hosts");
  }
  while (sqlite3_step(s) == SQLITE_ROW) snap.hosts.push_back(StoredHost{Text(s, 0), Text(s, 1)});
  sqlite3_finalize(s);
  if (sqlite3_prepare_v2(db, "SELECT key, value FROM settings", -1, &s, nullptr) != SQLITE_OK) {
    return SqlError(db, "reading settings");
  }
  while (sqlite3_step(s) == SQLITE_ROW) snap.settings[Text(s, 0)] = sqlite3_column_int64(s, 1);
  sqlite3_finalize(s);
  if (sqlite3_prepare_v2(db, "SELECT name, spec FROM reservations", -1, &s, nullptr) != SQLITE_OK) {
    return SqlError(db, "reading reservations");
  }
  while (sqlite3_step(s) == SQLITE_ROW) snap.reservations[Text(s, 0)] = Text(s, 1);
  sqlite3_finalize(s);
  return snap;
}

// NOTE: the writer is idle (reads precede writes), so the writer's connection serves this
// one thread.
Status SqliteStore::ReadJobs(JobId first, JobId last, size_t chunk_rows,
                             const std::function<void(std::vector<StoredJob>&&)>& take) {
  sqlite3* db = impl_->db();
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT id, spec, state, seq, submit_time, start_time, end_time, "
                         "exit_code, cause, allocation, start_seq, phase, enqueue_time, policy, "
                         "bypass_count, first_blocked, gate_since, epoch, dispatch_attempts, "
                         "cancel_requested, preempted_for, preempt_kill_at, cpu_seconds, "
                         "max_rss_mb, message, array_states, steps, events FROM jobs "
                         "WHERE id BETWEEN ? AND ? ORDER BY id",
                         -1, &s, nullptr) != SQLITE_OK) {
    return SqlError(db, "reading jobs");
  }
  sqlite3_bind_int64(s, 1, first);
  sqlite3_bind_int64(s, 2, last);
  chunk_rows = std::max<size_t>(chunk_rows, 1);
  std::vector<StoredJob> chunk;
  chunk.reserve(chunk_rows);
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    StoredJob& j = chunk.emplace_back();
    j.id = sqlite3_column_int64(s, 0);
    j.spec = Text(s, 1);
    j.state = Text(s, 2);
    j.seq = static_cast<uint64_t>(sqlite3_column_int64(s, 3));
    j.submit_time = sqlite3_column_int64(s, 4);
    j.start_time = sqlite3_column_int64(s, 5);
    j.end_time = sqlite3_column_int64(s, 6);
    if (auto code = OptionalInt(s, 7)) j.exit_code = static_cast<int32_t>(*code);
    j.cause = Text(s, 8);
    j.allocation = Text(s, 9);
    j.start_seq = static_cast<uint64_t>(sqlite3_column_int64(s, 10));
    j.phase = Text(s, 11);
    j.enqueue_time = sqlite3_column_int64(s, 12);
    j.policy = Text(s, 13);
    j.bypass_count = static_cast<int32_t>(sqlite3_column_int64(s, 14));
    j.first_blocked = OptionalInt(s, 15);
    j.gate_since = OptionalInt(s, 16);
    j.epoch = static_cast<uint64_t>(sqlite3_column_int64(s, 17));
    j.dispatch_attempts = static_cast<int32_t>(sqlite3_column_int64(s, 18));
    j.cancel_requested = sqlite3_column_int64(s, 19) != 0;
    j.preempted_for = sqlite3_column_int64(s, 20);
    j.preempt_kill_at = sqlite3_column_int64(s, 21);
    j.cpu_seconds = OptionalDouble(s, 22);
    j.max_rss_mb = OptionalDouble(s, 23);
    j.message = Text(s, 24);
    j.array_states = Text(s, 25);
    j.steps = Text(s, 26);
    j.events = Text(s, 27);
    if (chunk.size() == chunk_rows) {
      take(std::move(chunk));
      chunk.clear();  // moved-from: valid, made empty again
      chunk.reserve(chunk_rows);
    }
  }
  const Status status = rc == SQLITE_DONE ? Status::Ok() : SqlError(db, "reading jobs");
  sqlite3_finalize(s);
  if (!chunk.empty() && status.ok()) take(std::move(chunk));
  return status;
}

Status SqliteStore::OverwriteEpochForTest(uint64_t epoch) {
  Flush();
  // A second connection, as a rival process would have.
  sqlite3* db = nullptr;
  if (sqlite3_open((dir_ + "/sluice.db").c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return Internal("cannot open database");
  }
  sqlite3_busy_timeout(db, 5000);
  const std::string sql =
      "INSERT OR REPLACE INTO meta (key, value) VALUES ('epoch', " + std::to_string(epoch) + ")";
  Status status = Exec(db, sql.c_str());
  sqlite3_close(db);
  return status;
}

}  // namespace sluice::store
