// History's shared parts (store/history.h): the filters, the scan of a backend without
// indexes, and Store's defaults.
#include "store/history.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace sluice::store {

bool IsEndedState(const std::string& state) {
  return state == "DONE" || state == "EXIT" || state == "CANCELLED";
}

bool MatchesHistory(const HistoryQuery& query, const StoredJob& row, const std::string& user,
                    const std::string& queue) {
  if (row.phase != "ENDED" || !IsEndedState(row.state)) return false;
  if (query.id && *query.id != row.id) return false;
  if (query.user && *query.user != user) return false;
  if (!query.queues.empty() &&
      std::find(query.queues.begin(), query.queues.end(), queue) == query.queues.end()) {
    return false;
  }
  if (!query.states.empty() &&
      std::find(query.states.begin(), query.states.end(), row.state) == query.states.end()) {
    return false;
  }
  if (row.end_time < query.since) return false;
  return !query.until || row.end_time < *query.until;
}

namespace {

// Newest end first, then the higher id: the order of every history page.
bool Before(int64_t end_a, JobId id_a, int64_t end_b, JobId id_b) {
  if (end_a != end_b) return end_a > end_b;
  return id_a > id_b;
}

}  // namespace

HistoryPage ScanHistory(std::vector<StoredJob> rows, const HistoryQuery& query) {
  std::vector<StoredJob> kept;
  for (StoredJob& row : rows) {
    if (query.after && !Before(query.after->first, query.after->second, row.end_time, row.id)) {
      continue;
    }
    const nlohmann::json spec = nlohmann::json::parse(row.spec, nullptr, false);
    if (!spec.is_object()) continue;
    const std::string user = spec.value("user", "");
    const std::string queue = spec.value("queue", "");
    if (MatchesHistory(query, row, user, queue)) kept.push_back(std::move(row));
  }
  std::sort(kept.begin(), kept.end(), [](const StoredJob& a, const StoredJob& b) {
    return Before(a.end_time, a.id, b.end_time, b.id);
  });
  HistoryPage page;
  const size_t limit = static_cast<size_t>(std::max<int64_t>(query.limit, 1));
  page.more = kept.size() > limit;
  if (page.more) kept.resize(limit);
  for (StoredJob& row : kept) page.records.push_back(HistoryRecord{.row = std::move(row)});
  return page;
}

Result<HistoryPage> Store::QueryHistory(const HistoryQuery& query) {
  Result<Snapshot> snap = Load();
  if (!snap) return snap.error();
  return ScanHistory(std::move(snap->jobs), query);
}

Result<int64_t> Store::PurgeHistory(int64_t /*ended_before*/, int64_t /*max_rows*/) {
  return int64_t{0};
}

}  // namespace sluice::store
