// Acknowledged store writes per second, SQLite against a 3-member etcd cluster on loopback
// (issue 15, docs/ha.md): single-job batches from 1 and 16 writers (the group commit at
// work) and 1,000-job batches; the store's size per job; and SQLite's specs read by id. Jobs are rows like a
// controller's (a ~250-byte spec). The etcd cluster is started by the benchmark
// (tests/testing/etcd_cluster.h); without the etcd binary its benchmarks are skipped.
// Not timed tests: nothing asserts. `build/sluice_bench --benchmark_filter=Store`.
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <sys/stat.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <nlohmann/json.hpp>
#include <string>

#include "store/store.h"
#include "testing/etcd_cluster.h"
#include "testing/subprocess.h"

namespace sluice::store {
namespace {

enum Backend : int64_t { kSqlite = 0, kEtcd = 1 };

StoredJob BenchRow(JobId id) {
  return StoredJob{.id = id,
                   .spec =
                       R"({"command":["/bin/sh","-c","sleep 30"],"queue":"normal",)"
                       R"("user":"alice","tasks":4,"resreq":"span[ptile=2] rusage[mem=512]",)"
                       R"("name":"bench-job","limit_seconds":3600,"output":"/home/alice/out.%J"})",
                   .state = "PENDING",
                   .seq = static_cast<uint64_t>(id),
                   .submit_time = 1764450000 + id,
                   .phase = "PENDING",
                   .enqueue_time = 1764450000 + id,
                   .policy = "fifo",
                   .epoch = 1};
}

testing::EtcdCluster* Cluster() {
  static std::string error;
  static std::unique_ptr<testing::EtcdCluster> cluster =
      testing::EtcdCluster::Unavailable() ? nullptr : testing::EtcdCluster::Start(3, error);
  return cluster.get();
}

// One store per benchmark run, shared by its threads.
struct Shared {
  std::mutex mu;
  std::unique_ptr<testing::TempDir> dir;
  std::unique_ptr<Store> store;
  std::atomic<JobId> next_id = 1;
};
Shared shared;
std::atomic<int> run_counter = 0;

std::string OpenShared(Backend backend) {
  if (backend == kSqlite) {
    shared.dir = std::make_unique<testing::TempDir>();
    auto store = Store::Open(shared.dir->path().string());
    if (!store) return store.error().ToString();
    shared.store = std::move(*store);
    return "";
  }
  if (Cluster() == nullptr) return "etcd is not available";
  auto store = Store::OpenUrl(Cluster()->Url("/bench" + std::to_string(++run_counter)));
  if (!store) return store.error().ToString();
  if (Status s = (*store)->AwaitLeadership(std::chrono::seconds(10)); !s.ok()) return s.ToString();
  shared.store = std::move(*store);
  return "";
}

void BM_StoreWrite(benchmark::State& state) {
  const auto backend = static_cast<Backend>(state.range(0));
  const int64_t jobs_per_batch = state.range(1);
  if (state.thread_index() == 0) {
    std::string error = OpenShared(backend);
    if (!error.empty()) state.SkipWithError(error.c_str());
  }
  // NOTE: Google Benchmark starts the threads' loops together after the setup above.
  int64_t failed = 0;
  for (auto _ : state) {
    if (shared.store == nullptr) break;
    WriteBatch batch;
    const JobId first = shared.next_id.fetch_add(jobs_per_batch);
    for (JobId id = first; id < first + jobs_per_batch; ++id) batch.jobs.push_back(BenchRow(id));
    if (!shared.store->WriteSync(std::move(batch)).ok()) ++failed;
  }
  state.SetItemsProcessed(state.iterations() * jobs_per_batch);
  state.counters["failed"] = static_cast<double>(failed);
  if (state.thread_index() == 0 && shared.store != nullptr) {
    const StoreStats stats = shared.store->stats();
    state.counters["batches_per_txn"] =
        stats.transactions > 0 ? static_cast<double>(stats.batches) / stats.transactions : 0;
    shared.store.reset();
  }
}

int64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// The physical size of the etcd member's database (every member holds a copy).
int64_t EtcdDbSize() {
  const std::string endpoint = Cluster()->endpoint(0);
  httplib::Client client("127.0.0.1", std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  httplib::Result res = client.Post("/v3/maintenance/status", "{}", "application/json");
  if (!res) return 0;
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  return j.is_object() ? std::stoll(j.value("dbSize", std::string("0"))) : 0;
}

// Writes 10,000 jobs in batches of 1,000 to an empty store, then each job once more (a state
// change), and reports the bytes per job before and after the rewrite.
void BM_StoreSizePerJob(benchmark::State& state) {
  const auto backend = static_cast<Backend>(state.range(0));
  constexpr JobId kJobs = 10000;
  for (auto _ : state) {
    const int64_t before = backend == kEtcd && Cluster() ? EtcdDbSize() : 0;
    if (std::string error = OpenShared(backend); !error.empty()) {
      state.SkipWithError(error.c_str());
      return;
    }
    auto write_all = [&](const std::string& job_state) {
      for (JobId first = 1; first <= kJobs; first += 1000) {
        WriteBatch batch;
        for (JobId id = first; id < first + 1000; ++id) {
          batch.jobs.push_back(BenchRow(id));
          batch.jobs.back().state = job_state;
        }
        (void)shared.store->WriteSync(std::move(batch));
      }
    };
    auto size = [&] {
      if (backend == kEtcd) return EtcdDbSize() - before;
      const std::string db = (shared.dir->path() / "sluice.db").string();
      return FileSize(db) + FileSize(db + "-wal");
    };
    write_all("PENDING");
    state.counters["bytes_per_job_once"] = static_cast<double>(size()) / kJobs;
    write_all("RUNNING");
    state.counters["bytes_per_job_twice"] = static_cast<double>(size()) / kJobs;
    shared.store.reset();
  }
}

// Specs read back by id (issue 45: the controller drops a spec once stored and reads it for a
// launch, a step or the details): 100,000 stored rows, ids in a seeded random order, with the
// writer committing state changes (rows without their spec: an UPDATE) meanwhile when
// range(0) is 1.
void BM_StoreReadSpec(benchmark::State& state) {
  constexpr JobId kJobs = 100000;
  if (std::string error = OpenShared(kSqlite); !error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  for (JobId first = 1; first <= kJobs; first += 10000) {
    WriteBatch batch;
    for (JobId id = first; id < first + 10000; ++id) batch.jobs.push_back(BenchRow(id));
    (void)shared.store->WriteSync(std::move(batch));
  }
  std::atomic<bool> stop = false;
  std::thread writer;
  if (state.range(0) == 1) {
    writer = std::thread([&stop] {
      for (JobId id = 1; !stop; id = id % kJobs + 1) {
        StoredJob row = BenchRow(id);
        row.spec.clear();
        row.state = "RUNNING";
        (void)shared.store->WriteSync(WriteBatch{.jobs = {std::move(row)}});
      }
    });
  }
  std::mt19937_64 rng(45);
  int64_t missing = 0;
  for (auto _ : state) {
    const JobId id = static_cast<JobId>(rng() % kJobs) + 1;
    Result<std::string> spec = shared.store->ReadSpec(id);
    if (!spec || spec->empty()) ++missing;
    benchmark::DoNotOptimize(spec);
  }
  stop = true;
  if (writer.joinable()) writer.join();
  state.counters["missing"] = static_cast<double>(missing);
  shared.store.reset();
}

// Single-job and 1,000-job batches from one writer; single-job batches from 16 writers.
BENCHMARK(BM_StoreWrite)
    ->ArgsProduct({{kSqlite, kEtcd}, {1, 1000}})
    ->Threads(1)
    ->UseRealTime()
    ->MinTime(1.0);
BENCHMARK(BM_StoreWrite)
    ->ArgsProduct({{kSqlite, kEtcd}, {1}})
    ->Threads(16)
    ->UseRealTime()
    ->MinTime(1.0);
BENCHMARK(BM_StoreSizePerJob)->Arg(kSqlite)->Arg(kEtcd)->Iterations(1)->UseRealTime();
BENCHMARK(BM_StoreReadSpec)->Arg(0)->Arg(1)->MinTime(1.0);

}  // namespace
}  // namespace sluice::store
