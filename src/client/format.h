// Text output of the CLI verbs: tables of jobs, hosts, queues and limits from the API's JSON,
// and pending reasons rendered like `bjobs -p` (the detail JSON of docs/api.md parsed back
// into core::ReasonDetail by wire/reasons_json.h and rendered by core::RenderReason, so the CLI,
// the simulator's `--pending-at` report and the server say the same words).
// Columns are padded to their widest cell. Missing or null fields print as `-`.
// Pure functions; times are printed in the process's local time zone.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/reasons/reason.h"

namespace sluice::client {

// The job members FormatJobs and FormatPendingJobs read (GET /v1/jobs?fields=...).
inline constexpr const char* kTableJobFields =
    "id,index,array,user,state,queue,tasks,hosts,exit_code,name,submit_time,start_time,end_time,"
    "reason,cause,message,estimated_start";

// `now` (epoch seconds) is the end of a running job's ELAPSED time.
// `jobs`: one row per job object; then, for each EXIT job with a message (e.g. MEM_LIMIT's
// limit and peak, a failed launch), `Job <id> <cause>: <message>`.
std::string FormatJobs(const nlohmann::json& jobs, int64_t now);
// `jobs -p`: each pending/held job's row followed by its reasons, one indented line each,
// and what would let it start (the API's `reasons.hint`) when the server sent it.
std::string FormatPendingJobs(const nlohmann::json& jobs, int64_t now);
// `jobs -o FIELDS`: a table of these job members (the API's names, upper-cased as headers),
// plus `elapsed`; ids as ID[INDEX], hosts as h1:2,h2:2, times as local clock times.
std::string FormatJobFields(const nlohmann::json& jobs, const std::vector<std::string>& fields,
                            int64_t now);
// How long a job ran or has run: `M:SS`, `H:MM:SS` or `D-HH:MM:SS` (squeue's %M); "-"
// before it starts.
std::string ElapsedText(const nlohmann::json& job, int64_t now);

// The pieces of the job tables, for the streamed listing (jobs_output.h) to print row by row
// exactly as the functions above print whole tables.
using TableRow = std::vector<std::string>;
const TableRow& JobTableHeader();
TableRow JobTableRow(const nlohmann::json& job, int64_t now);
// One `-o` field of a job (FormatJobFields' cells).
std::string JobFieldCell(const nlohmann::json& job, const std::string& field, int64_t now);
// `jobs -p`'s lines under a job's row (its reasons, hint and estimate), each "\n"-ended.
std::string PendingReasonText(const nlohmann::json& job);
// FormatJobs' note under the table for an EXIT job with a message; "" for other jobs.
std::string ExitNote(const nlohmann::json& job);
// Each column's width: its widest cell among the header and `rows`.
std::vector<size_t> ColumnWidths(const TableRow& header, const std::vector<TableRow>& rows);
// A row padded to `widths` and 2 spaces between columns, "\n"-ended; a cell wider than its
// column (a streamed table's late row) pushes the rest of its line right.
std::string TableLine(const TableRow& row, const std::vector<size_t>& widths);
// `sluice hosts`; a RESERVATION column (client/rsv_format.h) when a host has a reservation.
std::string FormatHosts(const nlohmann::json& hosts);
std::string FormatQueues(const nlohmann::json& queues);
std::string FormatLimits(const nlohmann::json& limits);
// The tables above: `header` and `rows`, each column padded to its widest cell.
std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

}  // namespace sluice::client
