// A job's events (issue 47.6; `bhist -l`): what its row alone would lose. The row holds the
// current run only; a requeue would erase the run before it, and a change leaves no trace. So
// the row keeps, in StoredJob::events, a JSON array of objects {"event", "time", ...}:
//   requeue   an earlier run ended by a requeue (or an ended job submitted again): its
//             "start_time" (0: it never started), "hosts" [[name, slots]...], "why", and, when
//             it had ended, its "state" and "exit_code"
//   modify    "by" (the user) and "changes" (the fields changed)
//   hold, release, cancel   "by"
// At most kMaxJobRuns requeues and kMaxJobEvents other events are kept (the oldest of each
// kind go first), so changes cannot push a run, and its accounting, out.
// From them: the job's runs as history rows (an earlier run is a REQUEUED row) and its
// timeline (submit, start, requeue, changes, end), ordered by time.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "server/job_row.h"
#include "store/store.h"
#include "wire/history_json.h"

namespace sluice::server {

inline constexpr size_t kMaxJobEvents = 64;  // changes (modify, hold, release, cancel)
inline constexpr size_t kMaxJobRuns = 256;   // earlier runs (requeue events)

// Appends `event` (with "event" and "time") to `row.events`.
void AppendJobEvent(store::StoredJob& row, nlohmann::json event);
void AppendJobEvent(JobRow& row, nlohmann::json event);
// Records that the current run of `row` ends by a requeue at `now` (call before the row's
// start time, allocation and end are cleared). A record's row is in state `state`.
void NoteRequeue(store::StoredJob& row, int64_t now, const std::string& why);
void NoteRequeue(JobRow& row, const std::string& state, int64_t now, const std::string& why);
// The events of `row`, oldest first (a row without events, or with unreadable ones: none).
std::vector<nlohmann::json> JobEvents(const store::StoredJob& row);
// How many times `row` was requeued, and when its current run's wait began (the last
// requeue, else the submission): one reading of its events.
struct Requeues {
  int32_t count = 0;
  int64_t queued_time = 0;
};
Requeues RequeuesOf(const store::StoredJob& row);
Requeues RequeuesOf(const JobRow& row);

// `current` (the row's own history entry, HistoryEntryOf) as the last run, after the earlier
// runs its events record (REQUEUED rows), oldest first.
std::vector<wire::HistoryEntry> JobRuns(const store::StoredJob& row, wire::HistoryEntry current);
// The timeline: [{"time", "event", ...}] — submit, each run's start, its requeue, the
// changes, and the end when it ended — ordered by time.
nlohmann::ordered_json JobTimeline(const store::StoredJob& row);

}  // namespace sluice::server
