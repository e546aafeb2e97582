// History: the store's query of ended jobs (R-UX-6), shared by both backends.
//
// A history query selects ended job rows (phase ENDED: states DONE, EXIT, CANCELLED) by user,
// queue, state and end time, newest end first (end_time descending, then id descending),
// one page at a time. A page ends at `limit` rows; the next page starts after the last row
// returned (`after`, the cursor: its end time and id), so paging while jobs keep ending
// returns every row that existed when paging began exactly once (new rows end later and
// sort before the first page).
//
// Backends: SQLite answers from indexes on (user, end_time), (queue, end_time),
// (state, end_time) and (end_time) (sqlite_history.cc); etcd scans every job row and
// filters (Store::QueryHistory's default, docs/api.md says so).
// Accounting columns (cpu_seconds, max_rss_mb, message) and steps are read when the rows have
// them.
// Thread-safety: value types and pure functions.
// Implements R-UX-6 (store side).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "store/store.h"

namespace sluice::store {

struct HistoryQuery {
  std::optional<JobId> id;          // one job only
  std::optional<std::string> user;  // nullopt: every user
  // Queue names to match in the spec's "queue" (the default queue also matches ""); empty:
  // every queue.
  std::vector<std::string> queues;
  std::vector<std::string> states;  // empty: DONE, EXIT and CANCELLED
  int64_t since = 0;                // end_time >= since (Unix seconds)
  std::optional<int64_t> until;     // end_time < until
  // The cursor: rows strictly after (in the order above) this (end_time, id).
  std::optional<std::pair<int64_t, JobId>> after;
  int64_t limit = 100;  // REQUIRES: >= 1
};

// One ended job as the store holds it.
// Its accounting (cpu_seconds, max_rss_mb, message) and steps are the row's (store.h's jobs
// columns).
struct HistoryRecord {
  StoredJob row;
};

struct HistoryPage {
  std::vector<HistoryRecord> records;
  bool more = false;  // another page follows the last record
};

// The ended states a history row may have.
bool IsEndedState(const std::string& state);

// Whether `row` (with its spec's user and queue) passes `query`'s filters, cursor aside.
bool MatchesHistory(const HistoryQuery& query, const StoredJob& row, const std::string& user,
                    const std::string& queue);

// A backend without indexes: filters `rows`, orders them and cuts the page.
HistoryPage ScanHistory(std::vector<StoredJob> rows, const HistoryQuery& query);

}  // namespace sluice::store
