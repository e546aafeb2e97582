// Store (R-SRV-1, R-SRV-2): rows round-trip, the epoch grows at each open and fences writes,
// one store per directory, group commit, commits on the caller's thread (issue 21), the WAL
// written in advance, and everything acknowledged survives a SIGKILL.
#include "store/store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include "store/history.h"
#include "testing/subprocess.h"

namespace sluice::store {
namespace {

using testing::TempDir;

StoredJob Job(JobId id) {
  return StoredJob{.id = id,
                   .spec = "{\"command\":\"true\",\"id\":" + std::to_string(id) + "}",
                   .state = "PENDING",
                   .seq = static_cast<uint64_t>(id) * 2,
                   .submit_time = 100 + id,
                   .phase = "PENDING",
                   .enqueue_time = 100 + id,
                   .policy = "fifo",
                   .epoch = 1};
}

// As ServerContext::WriteAndWait writes: queued for the caller, committed by it.
Status WriteOnCaller(Store& store, WriteBatch batch) {
  std::promise<Status> done;
  std::future<Status> future = done.get_future();
  store.WriteForCaller(std::move(batch), [&done](const Status& s) { done.set_value(s); });
  store.CommitOnCaller();
  return future.get();
}

// The state column of job `id` as another connection (another process) reads the database:
// only what was committed. "" when the row is not there.
std::string CommittedState(const std::filesystem::path& dir, JobId id) {
  sqlite3* db = nullptr;
  std::string state;
  if (sqlite3_open_v2((dir / "sluice.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    const std::string sql = "SELECT state FROM jobs WHERE id = " + std::to_string(id);
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
      state = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return state;
}

TEST(StoreTest, RowsRoundTripAndEpochGrowsOnEachOpen) {
  TempDir dir;
  StoredJob full = Job(7);
  full.state = "ADMITTING";
  full.exit_code = 3;
  full.cause = "NON_ZERO_EXIT";
  full.allocation = R"({"hosts":[{"host":"h1","slots":2}]})";
  full.start_seq = 4;
  full.bypass_count = 5;
  full.first_blocked = 120;
  full.gate_since = 130;
  full.dispatch_attempts = 2;
  full.cancel_requested = true;
  full.preempted_for = 9;
  full.preempt_kill_at = 1764450030;
  full.cpu_seconds = 0.25;
  full.max_rss_mb = 12.5;
  full.message = "memory limit 64 MB reached";
  full.steps = R"([{"step":1,"host":"h1","command":"echo 'a, \"b\"'","start_time":1764450001,)"
               R"("end_time":0,"exit_code":null,"signal":null,"cpu_seconds":null,)"
               R"("max_rss_mb":null,"state":"RUNNING"}])";
  full.events = R"([{"event":"hold","time":1764450002,"by":"alice"}])";
  {
    auto store = Store::Open(dir.path().string());
    ASSERT_TRUE(store) << store.error().ToString();
    EXPECT_EQ((*store)->epoch(), 1u);
    ASSERT_TRUE((*store)
                    ->WriteSync(WriteBatch{.jobs = {Job(1), full},
                                           .hosts = {{"x1", "{\"slots\":4}"}},
                                           .config_version = 3,
                                           .settings = {{"queue_open/a", 0},
                                                        {"reclaim_deadline/b", 1764450000},
                                                        {"host_closed/h1", 1}}})
                    .ok());
    // nullopt deletes.
    ASSERT_TRUE(
        (*store)->WriteSync(WriteBatch{.settings = {{"host_closed/h1", std::nullopt}}}).ok());
  }
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store);
  EXPECT_EQ((*store)->epoch(), 2u);
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->epoch, 2u);
  EXPECT_EQ(snap->config_version, 3);
  ASSERT_EQ(snap->jobs.size(), 2u);
  EXPECT_EQ(snap->jobs[0], Job(1));
  EXPECT_EQ(snap->jobs[1], full);
  ASSERT_EQ(snap->hosts.size(), 1u);
  EXPECT_EQ(snap->hosts[0].name, "x1");
  EXPECT_EQ(snap->settings, (std::map<std::string, int64_t>{{"queue_open/a", 0},
                                                            {"reclaim_deadline/b", 1764450000}}));
}

// Specs on demand (issue 45): the controller drops a spec once a write carrying it committed
// and reads it back by id, so a row written without one must keep the stored spec, and a row
// gone from the store (its history purged) must not come back without one.
TEST(StoreTest, ARowWrittenWithoutItsSpecKeepsTheStoredOne) {
  TempDir dir;
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store) << store.error().ToString();
  ASSERT_TRUE((*store)->ServesSpecs());
  ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {Job(1)}}).ok());
  Result<std::string> read = (*store)->ReadSpec(1);
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(*read, Job(1).spec);

  StoredJob changed = Job(1);
  changed.spec.clear();
  changed.state = "RUNNING";
  changed.start_time = 500;
  StoredJob gone = Job(2);  // never stored with its spec
  gone.spec.clear();
  ASSERT_TRUE(WriteOnCaller(**store, WriteBatch{.jobs = {changed, gone}}).ok());
  read = (*store)->ReadSpec(1);
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, Job(1).spec);
  EXPECT_EQ((*store)->ReadSpec(2).error().code(), StatusCode::kNotFound);

  store->reset();
  store = Store::Open(dir.path().string());
  ASSERT_TRUE(store);
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->jobs.size(), 1u);
  StoredJob expected = changed;
  expected.spec = Job(1).spec;
  EXPECT_EQ(snap->jobs[0], expected);
}

TEST(StoreTest, TheSpecReaderReadsTheLastCommittedSpec) {
  TempDir dir;
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store);
  ASSERT_EQ((*store)->ReadSpec(3).error().code(), StatusCode::kNotFound);
  StoredJob modified = Job(3);
  ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {modified}}).ok());
  modified.spec = R"({"command":"false","id":3})";  // as `modify` writes it
  ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {modified}}).ok());
  Result<std::string> read = (*store)->ReadSpec(3);
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, modified.spec);
}

// A state directory written before the preemption, accounting and steps columns existed opens,
// keeps its rows and stores the new fields from then on; its history shows them too.
TEST(StoreTest, AnOlderDatabaseGainsTheNewColumns) {
  TempDir dir;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir.path() / "sluice.db").c_str(), &db), SQLITE_OK);
    const char* old_schema = R"sql(
      CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      INSERT INTO meta VALUES ('epoch', 4);
      CREATE TABLE jobs (id INTEGER PRIMARY KEY, spec TEXT NOT NULL, state TEXT NOT NULL,
        seq INTEGER NOT NULL, submit_time INTEGER NOT NULL, start_time INTEGER NOT NULL,
        end_time INTEGER NOT NULL, exit_code INTEGER, cause TEXT NOT NULL,
        allocation TEXT NOT NULL, start_seq INTEGER NOT NULL, phase TEXT NOT NULL,
        enqueue_time INTEGER NOT NULL, policy TEXT NOT NULL, bypass_count INTEGER NOT NULL,
        first_blocked INTEGER, gate_since INTEGER, epoch INTEGER NOT NULL,
        dispatch_attempts INTEGER NOT NULL, cancel_requested INTEGER NOT NULL);
      INSERT INTO jobs VALUES (3, '{}', 'RUNNING', 1, 10, 11, 0, NULL, '', '', 1, 'ADMITTED',
        10, 'fifo', 0, NULL, NULL, 4, 0, 0);
    )sql";
    ASSERT_EQ(sqlite3_exec(db, old_schema, nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  StoredJob victim = Job(5);
  victim.preempted_for = 3;
  victim.preempt_kill_at = 99;
  victim.cpu_seconds = 2;
  victim.max_rss_mb = 100.5;
  victim.message = "m";
  victim.steps = R"([{"step":1,"host":"h1","command":"true","start_time":11,"end_time":12,)"
                 R"("exit_code":0,"signal":null,"cpu_seconds":0.0,"max_rss_mb":1.5,)"
                 R"("state":"COMPLETED"}])";
  {
    auto store = Store::Open(dir.path().string());
    ASSERT_TRUE(store) << store.error().ToString();
    EXPECT_EQ((*store)->epoch(), 5u);
    auto snap = (*store)->Load();
    ASSERT_TRUE(snap) << snap.error().ToString();
    ASSERT_EQ(snap->jobs.size(), 1u);
    EXPECT_EQ(snap->jobs[0].id, 3);
    EXPECT_EQ(snap->jobs[0].state, "RUNNING");
    EXPECT_EQ(snap->jobs[0].preempted_for, 0);
    EXPECT_FALSE(snap->jobs[0].cpu_seconds);
    EXPECT_EQ(snap->jobs[0].message, "");
    EXPECT_EQ(snap->jobs[0].steps, "");
    ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {victim}}).ok());
  }
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store) << store.error().ToString();
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->jobs.size(), 2u);
  EXPECT_EQ(snap->jobs[1], victim);
  // History reads the added column as well (its own connection, its own column list).
  StoredJob ended = victim;
  ended.state = "DONE";
  ended.phase = "ENDED";
  ended.end_time = 20;
  ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {ended}}).ok());
  auto page = (*store)->QueryHistory(HistoryQuery{});
  ASSERT_TRUE(page) << page.error().ToString();
  ASSERT_EQ(page->records.size(), 1u);
  EXPECT_EQ(page->records[0].row.steps, victim.steps);
}

TEST(StoreTest, ASecondStoreOnTheSameDirectoryIsRefused) {
  TempDir dir;
  auto first = Store::Open(dir.path().string());
  ASSERT_TRUE(first);
  auto second = Store::Open(dir.path().string());
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.error().message().find("locked by another sluice server"), std::string::npos);
  first->reset();
  EXPECT_TRUE(Store::Open(dir.path().string()));  // the lock goes with the store
}

TEST(StoreTest, AWriteUnderAnOlderEpochIsRefused) {
  TempDir dir;
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store);
  ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {Job(1)}}).ok());
  ASSERT_TRUE((*store)->OverwriteEpochForTest(9).ok());
  Status status = (*store)->WriteSync(WriteBatch{.jobs = {Job(2)}});
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("fenced"), std::string::npos);
  store->reset();
  auto reopened = Store::Open(dir.path().string());
  ASSERT_TRUE(reopened);
  EXPECT_EQ((*reopened)->epoch(), 10u);
  EXPECT_EQ((*reopened)->Load()->jobs.size(), 1u);  // the fenced write left nothing
}

TEST(StoreTest, ConcurrentWritesAreGroupedIntoFewerTransactions) {
  TempDir dir;
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store);
  constexpr int kWriters = 8;
  constexpr int kEach = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures = 0;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        if (!(*store)->WriteSync(WriteBatch{.jobs = {Job(t * kEach + i + 1)}}).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
  StoreStats stats = (*store)->stats();
  EXPECT_EQ(stats.batches, kWriters * kEach);
  EXPECT_LT(stats.transactions, stats.batches);
  EXPECT_EQ((*store)->Load()->jobs.size(), static_cast<size_t>(kWriters * kEach));
}

// The writer checkpoints the WAL itself (after acknowledging, not inside a COMMIT): the WAL
// file stays bounded (at most ~4,000 pages, the forced checkpoint, when the queue never
// empties) instead of growing with every commit, and what was written reads back.
TEST(StoreTest, TheWriterCheckpointsTheWal) {
  TempDir dir;
  const std::string big(16 * 1024, 'x');  // ~5 pages of the WAL per job
  {
    auto store = Store::Open(dir.path().string());
    ASSERT_TRUE(store);
    for (JobId first = 1; first <= 2000; first += 10) {
      WriteBatch batch;
      for (JobId id = first; id < first + 10; ++id) {
        batch.jobs.push_back(Job(id));
        batch.jobs.back().spec = big;
      }
      ASSERT_TRUE((*store)->WriteSync(std::move(batch)).ok());
    }
    EXPECT_GE((*store)->stats().checkpoints, 1);
    // ~10,000 pages were written; without checkpoints the WAL would hold them all (~40 MB).
    EXPECT_LT(std::filesystem::file_size(dir.path() / "sluice.db-wal"), 18u << 20);
  }
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store);
  EXPECT_EQ((*store)->Load()->jobs.size(), 2000u);
}

// A child process writes batches and reports each acknowledged id through a pipe, then is
// killed with SIGKILL mid-stream; the reopened store holds every acknowledged job. The writes
// commit on the writer thread (WriteSync) or on the callers' threads (WriteOnCaller).
void ExpectEverythingAcknowledgedSurvivesSigkill(bool on_caller) {
  TempDir dir;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    auto store = Store::Open(dir.path().string());
    if (!store) _exit(3);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (JobId id = t + 1;; id += 4) {
          WriteBatch batch{.jobs = {Job(id)}};
          const Status s = on_caller ? WriteOnCaller(**store, std::move(batch))
                                     : (*store)->WriteSync(std::move(batch));
          if (!s.ok()) _exit(4);
          int64_t acked = id;
          if (write(fds[1], &acked, sizeof acked) != sizeof acked) _exit(5);
        }
      });
    }
    for (auto& th : threads) th.join();
    _exit(0);
  }
  close(fds[1]);
  std::set<JobId> acked;
  int64_t id = 0;
  while (acked.size() < 300 && read(fds[0], &id, sizeof id) == sizeof id) acked.insert(id);
  kill(pid, SIGKILL);
  while (read(fds[0], &id, sizeof id) == sizeof id) acked.insert(id);  // drain what was sent
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  ASSERT_TRUE(WIFSIGNALED(wstatus));
  ASSERT_GE(acked.size(), 300u);

  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_EQ((*store)->epoch(), 2u);
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap);
  std::set<JobId> stored;
  for (const StoredJob& j : snap->jobs) {
    EXPECT_EQ(j, Job(j.id));
    stored.insert(j.id);
  }
  for (JobId a : acked) EXPECT_TRUE(stored.contains(a)) << "acknowledged job " << a << " lost";
}

TEST(StoreTest, EverythingAcknowledgedSurvivesSigkill) {
  ExpectEverythingAcknowledgedSurvivesSigkill(/*on_caller=*/false);
}

TEST(StoreTest, EverythingAcknowledgedOnCallersThreadsSurvivesSigkill) {
  ExpectEverythingAcknowledgedSurvivesSigkill(/*on_caller=*/true);
}

// WriteForCaller + CommitOnCaller: the batch commits on the caller's thread, its callback runs
// there, and it is committed (another connection sees it) when CommitOnCaller returns.
TEST(StoreTest, ACallerCommitsItsBatchOnItsOwnThread) {
  TempDir dir;
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store);
  std::thread::id ran_on;
  Status status = Internal("not run");
  (*store)->WriteForCaller(WriteBatch{.jobs = {Job(1)}}, [&](const Status& s) {
    ran_on = std::this_thread::get_id();
    status = s;
  });
  (*store)->CommitOnCaller();
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(CommittedState(dir.path(), 1), "PENDING");
  EXPECT_EQ((*store)->stats().caller_commits, 1);
  store->reset();
  auto reopened = Store::Open(dir.path().string());
  ASSERT_TRUE(reopened);
  EXPECT_EQ((*reopened)->Load()->jobs.size(), 1u);
}

// The WAL's files outlive a clean close, whichever of the store's connections closes last, so
// that a restart on a full disk can open the store without creating them.
TEST(StoreTest, TheWalFilesStayWhenTheStoreCloses) {
  TempDir dir;
  {
    auto store = Store::Open(dir.path().string());
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {Job(1)}}).ok());
  }
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "sluice.db-wal"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "sluice.db-shm"));
  auto reopened = Store::Open(dir.path().string());
  ASSERT_TRUE(reopened);
  EXPECT_EQ((*reopened)->Load()->jobs.size(), 1u);
}

// A callback that throws while its batch commits on a request's thread ends the process: an
// HTTP handler catching the exception would otherwise leave the store marked as committing,
// and no later batch would ever commit.
TEST(StoreTest, ACallbackThatThrowsOnACallersCommitEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir dir;
  EXPECT_EXIT(
      {
        auto store = Store::Open(dir.path().string());
        if (!store) std::_Exit(3);
        (*store)->WriteForCaller(WriteBatch{.jobs = {Job(1)}}, [](const Status&) {
          throw std::runtime_error("controller code failed");
        });
        try {
          (*store)->CommitOnCaller();
        } catch (...) {
          std::_Exit(4);  // the exception came back to the caller: the store would be stuck
        }
        std::_Exit(5);
      },
      ::testing::KilledBySignal(SIGABRT), "");
}

// While one caller's commit is under way (its callback held here), a second caller's batch
// and a background Write queue behind it; the second caller returns at once without its
// commit, and the writer thread commits both afterwards, in the order they were queued.
TEST(StoreTest, BatchesQueuedDuringACallersCommitAreCommittedInOrderByTheWriter) {
  TempDir dir;
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store);
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::thread first([&] {
    (*store)->WriteForCaller(WriteBatch{.jobs = {Job(1)}}, [&](const Status&) {
      entered.set_value();
      released.wait();
    });
    (*store)->CommitOnCaller();
  });
  entered.get_future().wait();  // the first caller's commit is under way
  StoredJob moved = Job(1);
  moved.state = "RUNNING";
  std::promise<std::thread::id> second_ran_on;
  (*store)->WriteForCaller(WriteBatch{.jobs = {moved}}, [&](const Status&) {
    second_ran_on.set_value(std::this_thread::get_id());
  });
  (*store)->CommitOnCaller();  // returns: a commit is under way
  std::promise<void> third_done;
  (*store)->Write(WriteBatch{.jobs = {Job(2)}}, [&](const Status&) { third_done.set_value(); });
  release.set_value();
  first.join();
  std::future<std::thread::id> second = second_ran_on.get_future();
  ASSERT_EQ(second.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_NE(second.get(), std::this_thread::get_id());
  ASSERT_EQ(third_done.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(CommittedState(dir.path(), 1), "RUNNING");
  EXPECT_EQ(CommittedState(dir.path(), 2), "PENDING");
}

// The WAL is written in advance (sqlite_store.cc, PreallocateWal): commits write over its
// blocks instead of growing the file, and what they wrote reads back after a reopen.
TEST(StoreTest, TheWalIsWrittenInAdvanceAndCommitsDoNotGrowIt) {
  TempDir dir;
  const auto wal = dir.path() / "sluice.db-wal";
  {
    auto store = Store::Open(dir.path().string());
    ASSERT_TRUE(store);
    const auto size = std::filesystem::file_size(wal);
    EXPECT_GE(size, 8'000'000u);
    for (JobId id = 1; id <= 300; ++id) {
      ASSERT_TRUE(WriteOnCaller(**store, WriteBatch{.jobs = {Job(id)}}).ok());
    }
    EXPECT_EQ(std::filesystem::file_size(wal), size);
  }
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store);
  EXPECT_EQ((*store)->Load()->jobs.size(), 300u);
}

}  // namespace
}  // namespace sluice::store
