// `sluice history` output (R-UX-6): the table, RFC 4180 CSV and the accounting summary, from
// GET /v1/history rows and GET /v1/history/summary (wire/history_json.h), and the time
// arguments of --since/--until.
// Thread-safety: pure functions (times are shown in the local time zone).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "wire/history_json.h"

namespace sluice::client {

// The columns of the table and the CSV, in order.
const std::vector<std::string>& HistoryColumns();

// One line per job under a header, columns aligned, each job followed by a line per step.
std::string FormatHistoryTable(const std::vector<wire::HistoryEntry>& entries);
// A header line, then one record per job, each followed by one record per step of the job
// (R-LAUNCH-2, as sacct lists steps): id `ID.N`, name the step's command, the job's user and
// queue, the step's state, exit code, start, end, run seconds, host (no slot count), cpu
// seconds and max_rss_mb, and message `killed by signal N` when it was; its cause, submit,
// wait_seconds and slots are empty. Fields with a comma, a double quote, CR or LF are
// quoted and their quotes doubled; every record ends with CRLF (RFC 4180). Times are ISO 8601
// local time; empty fields are values that do not exist (never started, not recorded).
std::string FormatHistoryCsv(const std::vector<wire::HistoryEntry>& entries);
// Two tables (per user, per queue) and the total, from the summary's JSON.
std::string FormatHistorySummary(const nlohmann::json& summary);

// `history -l ID` (issue 47.6; bhist -l): GET /v1/history/ID's timeline, one line per event
// (submitted, started on HOSTS, requeued: WHY, modified by USER: CHANGES, held, released,
// cancel requested, ended STATE (exit N)), then the runs' count and total wait and run time.
std::string FormatJobTimeline(const nlohmann::json& history);

// --since/--until: epoch seconds, -DURATION (that long before `now`: 90s, 30m, 12h, 7d), or
// YYYY-MM-DD[THH:MM[:SS]] local time. Errors: kInvalidArgument naming `flag`.
Result<int64_t> ParseHistoryTime(const std::string& flag, const std::string& text, int64_t now);

}  // namespace sluice::client
