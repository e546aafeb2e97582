// sluice history [-u USER|all] [-q QUEUE] [-s STATES] [--since T] [--until T]
//                [--json|--csv|--summary] [--limit N]      (sacct, bhist; R-UX-6)
// sluice history [-l] [--json|--csv] ID... | -j ID          (sacct -j, bhist -l; issue 47.6)
// Reads GET /v1/history page by page (newest end first) until the pages end or --limit rows
// were printed; --summary prints GET /v1/history/summary's totals per user and queue. With
// job ids, GET /v1/history/ID for each: its runs (an earlier run ended by a requeue is a
// REQUEUED row), whatever its state; -l prints its timeline instead.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/rest_verbs.h"
#include "cli/compat/job_lookup.h"
#include "client/history_format.h"
#include "wire/history_json.h"

namespace sluice::cli {
namespace {

using nlohmann::json;
using namespace verbs;

struct HistoryCommand {
  Connection connection;
  std::string user;
  std::string queue;
  std::string states;
  std::string since;
  std::string until;
  bool as_json = false;
  bool as_csv = false;
  bool summary = false;
  bool long_format = false;
  int64_t limit = 0;  // 0: every matching job
  std::vector<std::string> ids;   // positional
  std::vector<std::string> jobs;  // -j (both name jobs)
};

// The filters as a query string ("" or "a=b&c=d"); errors name the flag.
Result<std::string> FilterQuery(const HistoryCommand& cmd) {
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::string query;
  const auto add = [&query](const std::string& key, const std::string& value) {
    query += (query.empty() ? "" : "&") + key + "=" + QueryEscape(value);
  };
  if (!cmd.user.empty()) add("user", cmd.user);
  if (!cmd.queue.empty()) add("queue", cmd.queue);
  if (!cmd.states.empty()) add("state", cmd.states);
  const std::pair<const char*, std::string> times[] = {{"--since", cmd.since},
                                                       {"--until", cmd.until}};
  for (const auto& [flag, text] : times) {
    if (text.empty()) continue;
    Result<int64_t> t = client::ParseHistoryTime(flag, text, now);
    if (!t) return t.error();
    add(std::string(flag).substr(2), std::to_string(*t));
  }
  return query;
}

// Every page (or the first --limit rows).
Result<std::vector<json>> FetchRows(client::RestClient& rest, const HistoryCommand& cmd,
                                    const std::string& filters) {
  std::vector<json> rows;
  std::string cursor;
  while (true) {
    int64_t page = 1000;
    if (cmd.limit > 0) page = std::min<int64_t>(page, cmd.limit - int64_t(rows.size()));
    std::string path = "/v1/history?limit=" + std::to_string(page);
    if (!filters.empty()) path += "&" + filters;
    if (!cursor.empty()) path += "&cursor=" + QueryEscape(cursor);
    Result<json> reply = rest.Get(path);
    if (!reply) return reply.error();
    for (json& row : (*reply)["jobs"]) rows.push_back(std::move(row));
    const json& next = (*reply)["next_cursor"];
    if (!next.is_string() || (cmd.limit > 0 && int64_t(rows.size()) >= cmd.limit)) break;
    cursor = next.get<std::string>();
  }
  // A page holds `page` jobs, and a job's earlier runs are rows too: at most --limit rows.
  if (cmd.limit > 0 && int64_t(rows.size()) > cmd.limit) rows.resize(cmd.limit);
  return rows;
}

int Usage(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 2;
}

// The rows (or the timelines, -l) of the jobs named.
int RunJobHistory(const HistoryCommand& cmd) {
  std::vector<JobId> ids;
  for (const std::string& text : cmd.ids) {
    if (text.find('-') != std::string::npos) {
      return Usage("job id '" + text + "': history takes a job or one array element, not a range");
    }
    Result<int64_t> id = compat::ParseJobId(text);  // ID, ID[INDEX], ID_INDEX, in range
    if (!id) return Usage(id.error().message());
    ids.push_back(*id);
  }
  return WithClient(cmd.connection, [&](client::RestClient& rest) {
    std::vector<wire::HistoryEntry> entries;
    json replies = json::array();
    for (JobId id : ids) {
      Result<json> reply = rest.Get("/v1/history/" + std::to_string(id));
      if (!reply) return Fail(reply.error());
      if (cmd.long_format && !cmd.as_json) {
        std::cout << client::FormatJobTimeline(*reply);
        continue;
      }
      replies.push_back(*reply);
      for (const json& row : (*reply)["runs"]) {
        Result<wire::HistoryEntry> entry = wire::ParseHistoryEntry(row);
        if (!entry) return Fail(entry.error());
        entries.push_back(std::move(*entry));
      }
    }
    if (cmd.long_format && !cmd.as_json) return 0;
    if (cmd.as_json) {
      std::cout << replies.dump(2) << "\n";
    } else {
      std::cout << (cmd.as_csv ? client::FormatHistoryCsv(entries)
                               : client::FormatHistoryTable(entries));
    }
    return 0;
  });
}

int RunHistory(const HistoryCommand& cmd) {
  if (int(cmd.as_json) + int(cmd.as_csv) + int(cmd.summary) > 1) {
    std::cerr << "error: --json, --csv and --summary exclude each other\n";
    return 2;
  }
  if (!cmd.ids.empty()) {
    if (cmd.summary || cmd.limit > 0 || !cmd.user.empty() || !cmd.queue.empty() ||
        !cmd.states.empty() || !cmd.since.empty() || !cmd.until.empty()) {
      return Usage("job ids select the jobs: no filter, --summary or --limit with them");
    }
    if (cmd.long_format && cmd.as_csv) return Usage("-l prints a timeline: not --csv");
    return RunJobHistory(cmd);
  }
  if (cmd.long_format) return Usage("-l needs job ids: sluice history -l ID");
  Result<std::string> filters = FilterQuery(cmd);
  if (!filters) return Fail(filters.error());
  return WithClient(cmd.connection, [&](client::RestClient& rest) {
    if (cmd.summary) {
      Result<json> summary =
          rest.Get("/v1/history/summary" + (filters->empty() ? "" : "?" + *filters));
      if (!summary) return Fail(summary.error());
      std::cout << client::FormatHistorySummary(*summary);
      return 0;
    }
    Result<std::vector<json>> rows = FetchRows(rest, cmd, *filters);
    if (!rows) return Fail(rows.error());
    if (cmd.as_json) {
      std::cout << json(*rows).dump(2) << "\n";
      return 0;
    }
    std::vector<wire::HistoryEntry> entries;
    for (const json& row : *rows) {
      Result<wire::HistoryEntry> entry = wire::ParseHistoryEntry(row);
      if (!entry) return Fail(entry.error());
      entries.push_back(std::move(*entry));
    }
    std::cout << (cmd.as_csv ? client::FormatHistoryCsv(entries)
                             : client::FormatHistoryTable(entries));
    return 0;
  });
}

}  // namespace

void RegisterHistoryCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("history", "ended jobs and accounting (sacct/bhist habits)");
  auto c = std::make_shared<HistoryCommand>();
  AddConnectionFlags(cmd, c->connection);
  cmd->add_option("-u,--user", c->user, "only this user's jobs (default and `all`: everyone)");
  cmd->add_option("-q,--queue", c->queue, "only this queue's jobs");
  cmd->add_option("-s,--state", c->states, "only these end states, e.g. EXIT,CANCELLED");
  cmd->add_option("--since", c->since, "ended at or after T (epoch, -7d, YYYY-MM-DD[THH:MM])");
  cmd->add_option("--until", c->until, "ended before T");
  cmd->add_flag("--json", c->as_json, "print the JSON rows of GET /v1/history");
  cmd->add_flag("--csv", c->as_csv, "print CSV (RFC 4180)");
  cmd->add_flag("--summary", c->summary,
                "totals per user and queue: jobs, slot-hours, "
                "cpu-hours, average wait");
  cmd->add_option("--limit", c->limit, "at most N jobs, newest first (default: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("ids", c->ids, "these jobs (ID or ID[INDEX]), whatever their state: each run");
  cmd->add_option("-j,--job", c->jobs, "a job, as the ids (sacct -j)");
  cmd->add_flag("-l,--long", c->long_format,
                "each job's timeline: submit, starts, requeues, changes, end (bhist -l)");
  cmd->callback([c, &exit_code] {
    c->ids.insert(c->ids.end(), c->jobs.begin(), c->jobs.end());
    exit_code = RunHistory(*c);
  });
}

}  // namespace sluice::cli
