// `sluice gen-history --state DIR [--jobs 1000000] [--users 100] [--queues 4] [--days 30]
//                     [--seed 1] [--measure USER]` (R-UX-6, docs/performance.md):
// fills a SQLite state directory with ended jobs (DONE, EXIT, CANCELLED; spread evenly over
// the last --days days; users and queues drawn at random) through the store's own write path,
// then, with --measure, times the history queries `sluice history -u USER --since -1d` makes:
// the first page (100 rows) and every page of that user's last day (1,000 rows each), median
// of 5 runs each. Refuses a directory a server holds (the store's lock).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "store/history.h"
#include "store/store.h"

namespace sluice::cli {
namespace {

struct GenHistoryFlags {
  std::string state;
  int64_t jobs = 1'000'000;
  int32_t users = 100;
  int32_t queues = 4;
  int32_t days = 30;
  uint64_t seed = 1;
  std::string measure;
};

store::StoredJob Row(JobId id, int64_t end, std::mt19937_64& rng, const GenHistoryFlags& f) {
  const int64_t run = static_cast<int64_t>(rng() % 7200);
  const int64_t wait = static_cast<int64_t>(rng() % 3600);
  const int slots = 1 << (rng() % 5);
  const int kind = static_cast<int>(rng() % 10);  // 7 DONE, 2 EXIT, 1 CANCELLED
  nlohmann::json spec = {{"command", "run"},
                         {"name", "job" + std::to_string(id)},
                         {"user", "user" + std::to_string(rng() % f.users)},
                         {"queue", "q" + std::to_string(rng() % f.queues)},
                         {"min_tasks", slots},
                         {"max_tasks", slots},
                         {"submit_time", end - run - wait}};
  store::StoredJob row{.id = id,
                       .spec = spec.dump(),
                       .state = kind < 7   ? "DONE"
                                : kind < 9 ? "EXIT"
                                           : "CANCELLED",
                       .seq = static_cast<uint64_t>(id),
                       .submit_time = end - run - wait,
                       .start_time = end - run,
                       .end_time = end,
                       .exit_code = kind < 7   ? 0
                                    : kind < 9 ? 1
                                               : 143,
                       .cause = kind < 7   ? ""
                                : kind < 9 ? "NON_ZERO_EXIT"
                                           : "",
                       .phase = "ENDED"};
  nlohmann::json grant = {{"host", "h" + std::to_string(rng() % 1000)}, {"slots", slots}};
  row.allocation = nlohmann::json{{"hosts", nlohmann::json::array({grant})}}.dump();
  return row;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times the first page and the whole of `user`'s last day; prints the figures.
int Measure(store::Store& store, const std::string& user, int64_t now) {
  std::vector<double> first;
  std::vector<double> all;
  int64_t rows = 0;
  for (int run = 0; run < 5; ++run) {
    store::HistoryQuery query{.user = user, .since = now - 86'400, .limit = 100};
    auto t0 = std::chrono::steady_clock::now();
    Result<store::HistoryPage> page = store.QueryHistory(query);
    first.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!page) {
      std::fprintf(stderr, "sluice gen-history: %s\n", page.error().ToString().c_str());
      return 1;
    }
    query.limit = 1000;
    rows = 0;
    t0 = std::chrono::steady_clock::now();
    while (true) {
      Result<store::HistoryPage> next = store.QueryHistory(query);
      if (!next) return 1;
      rows += static_cast<int64_t>(next->records.size());
      if (!next->more) break;
      query.after = std::make_pair(next->records.back().row.end_time, next->records.back().row.id);
    }
    all.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf(
      "user %s, last day: %lld rows; first page (100) %.2f ms, every page %.2f ms "
      "(median of 5)\n",
      user.c_str(), static_cast<long long>(rows), Median(first), Median(all));
  return 0;
}

int RunGenHistory(const GenHistoryFlags& f) {
  Result<std::unique_ptr<store::Store>> opened = store::Store::Open(f.state);
  if (!opened) {
    std::fprintf(stderr, "sluice gen-history: %s\n", opened.error().message().c_str());
    return 1;
  }
  store::Store& store = **opened;
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::mt19937_64 rng(f.seed);
  const int64_t span = int64_t{f.days} * 86'400;
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int64_t kBatch = 10'000;
  for (int64_t first = 1; first <= f.jobs; first += kBatch) {
    store::WriteBatch batch;
    for (JobId id = first; id < std::min(first + kBatch, f.jobs + 1); ++id) {
      // Ends in id order, evenly over the span, the last just now.
      const int64_t end = now - span + span * id / std::max<int64_t>(f.jobs, 1);
      batch.jobs.push_back(Row(id, end, rng, f));
    }
    if (Status s = store.WriteSync(std::move(batch)); !s.ok()) {
      std::fprintf(stderr, "sluice gen-history: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  if (f.jobs > 0) {
    std::printf("wrote %lld ended jobs in %.1f s\n", static_cast<long long>(f.jobs),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return f.measure.empty() ? 0 : Measure(store, f.measure, now);
}

}  // namespace

void RegisterGenHistoryCommand(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<GenHistoryFlags>();
  CLI::App* cmd = app.add_subcommand(
      "gen-history", "fill a state directory with ended jobs and time history queries");
  cmd->add_option("--state", f->state, "state directory (SQLite)")->required();
  cmd->add_option("--jobs", f->jobs, "ended jobs to write (0: only --measure)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--users", f->users, "users")->check(CLI::PositiveNumber);
  cmd->add_option("--queues", f->queues, "queues")->check(CLI::PositiveNumber);
  cmd->add_option("--days", f->days, "days the end times spread over")->check(CLI::PositiveNumber);
  cmd->add_option("--seed", f->seed, "random seed");
  cmd->add_option("--measure", f->measure, "time USER's last day of history (e.g. user7)");
  cmd->callback([f, &exit_code] { exit_code = RunGenHistory(*f); });
}

}  // namespace sluice::cli
