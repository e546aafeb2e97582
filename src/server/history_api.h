// History (R-UX-6; docs/api.md "History"): GET /v1/history and GET /v1/history/summary
// answered from the store (store/history.h) — ended jobs stay queryable after they leave the
// controller's memory and across restarts — and HistoryKeeper, which deletes rows older than
// --keep-history-days in the background.
//
// Query parameters (both routes): user (a name, or "all"; absent: every user), queue,
// state (comma-separated of DONE, EXIT, CANCELLED), since and until (Unix seconds, on the
// end time: since <= end < until), and for the page route cursor (the previous page's
// next_cursor) and limit (1..10000, default 100). A page is {"jobs": [row...],
// "next_cursor": text or null}; rows are wire/history_json.h's, newest end first.
// Thread-safety: the store calls run without the controller's lock (the store is
// thread-safe); HistoryKeeper runs its own thread.
#pragma once

#include <spdlog/logger.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "server/context.h"
#include "store/history.h"
#include "store/store.h"
#include "wire/history_json.h"

namespace sluice::server {

inline constexpr int64_t kMaxHistoryPage = 10'000;

// The store query of a request. `default_queue` also matches rows stored without a queue.
// Errors: kInvalidArgument naming the parameter.
Result<store::HistoryQuery> ParseHistoryQuery(const std::map<std::string, std::string>& params,
                                              const std::string& default_queue);

// One stored row as a history entry (queue "" is `default_queue`).
wire::HistoryEntry HistoryEntryOf(const store::HistoryRecord& record,
                                  const std::string& default_queue);

// GET /v1/history: one page.
Result<nlohmann::ordered_json> HistoryPageJson(store::Store& store,
                                               const store::HistoryQuery& query,
                                               const std::string& default_queue);
// GET /v1/history/summary: every matching row, pages of kMaxHistoryPage, totalled.
Result<nlohmann::ordered_json> HistorySummaryJson(store::Store& store, store::HistoryQuery query,
                                                  const std::string& default_queue);

// Deletes history rows whose jobs ended more than `keep_seconds` ago (--keep-history-days,
// for a store that purges itself: Store::PurgesHistory; the controller keeps the others'): every
// `interval_ms`, chunks of `chunk` rows (one short store transaction each, so cycles' commits
// wait at most one chunk), until a chunk comes back short.
class HistoryKeeper {
 public:
  struct Options {
    int64_t keep_seconds = 30 * 86'400;  // < 0: keep forever (the keeper does nothing)
    int64_t interval_ms = 60'000;
    int64_t chunk = 1'000;
  };
  HistoryKeeper(store::Store* store, Options options, ClockMs clock,
                std::shared_ptr<spdlog::logger> log);
  ~HistoryKeeper() { Stop(); }

  void Start();
  void Stop();
  // One purge pass now; returns the rows deleted (tests, and the thread's body).
  int64_t PurgeOnce();

 private:
  store::Store* store_;
  Options options_;
  ClockMs clock_;
  std::shared_ptr<spdlog::logger> log_;
  Mutex mu_{LockRank::kHistoryKeeper};
  std::condition_variable_any cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sluice::server
