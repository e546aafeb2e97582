#include "server/history_api.h"

#include "wire/step_record.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "base/array_ids.h"
#include "server/controller.h"
#include "server/job_events.h"
#include "server/text_parsers.h"

namespace sluice::server {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// state=DONE,EXIT: upper-cased; only ended states.
Status ParseStates(const std::string& value, store::HistoryQuery& q) {
  for (std::string state : SplitList(value)) {
    std::transform(state.begin(), state.end(), state.begin(), ::toupper);
    if (!store::IsEndedState(state)) {
      return InvalidArgument("state: '" + state +
                             "' is not an ended state (DONE, EXIT, CANCELLED); "
                             "GET /v1/jobs lists jobs that have not ended");
    }
    q.states.push_back(state);
  }
  return Status::Ok();
}

Status ParseParam(const std::string& key, const std::string& value,
                  const std::string& default_queue, store::HistoryQuery& q) {
  constexpr int64_t kMaxTime = int64_t{1} << 40;
  if (key == "user") {
    if (value != "all" && !value.empty()) q.user = value;
  } else if (key == "queue") {
    for (const std::string& queue : SplitList(value)) {
      q.queues.push_back(queue);
      if (queue == default_queue) q.queues.push_back("");
    }
  } else if (key == "state") {
    return ParseStates(value, q);
  } else if (key == "id") {
    Result<int64_t> id = QueryInteger(key, value, 1, std::numeric_limits<int64_t>::max());
    if (!id) return id.error();
    q.id = *id;
  } else if (key == "since" || key == "until") {
    Result<int64_t> t = QueryInteger(key, value, 0, kMaxTime);
    if (!t) return t.error();
    if (key == "since") q.since = *t;
    if (key == "until") q.until = *t;
  } else if (key == "cursor") {
    Result<std::pair<int64_t, JobId>> after = wire::DecodeHistoryCursor(value);
    if (!after) return after.error();
    q.after = *after;
  } else if (key == "limit") {
    Result<int64_t> limit = QueryInteger(key, value, 1, kMaxHistoryPage);
    if (!limit) return limit.error();
    q.limit = *limit;
  } else {
    return InvalidArgument(key + ": unknown query parameter");
  }
  return Status::Ok();
}

}  // namespace

Result<store::HistoryQuery> ParseHistoryQuery(const std::map<std::string, std::string>& params,
                                              const std::string& default_queue) {
  store::HistoryQuery q;
  for (const auto& [key, value] : params) {
    SLUICE_RETURN_IF_ERROR(ParseParam(key, value, default_queue, q));
  }
  return q;
}

wire::HistoryEntry HistoryEntryOf(const store::HistoryRecord& record,
                                  const std::string& default_queue) {
  const store::StoredJob& row = record.row;
  const json spec = json::parse(row.spec, nullptr, false);
  wire::HistoryEntry e{.id = row.id,
                       .state = row.state,
                       .exit_code = row.exit_code,
                       .cause = row.cause,
                       .submit_time = row.submit_time,
                       .start_time = row.start_time,
                       .end_time = row.end_time,
                       .cpu_seconds = row.cpu_seconds,
                       .max_rss_mb = row.max_rss_mb
                                         ? std::optional<int64_t>(std::llround(*row.max_rss_mb))
                                         : std::nullopt,
                       .message = row.message};
  if (spec.is_object()) {
    e.name = spec.value("name", "");
    e.user = spec.value("user", "");
    e.queue = spec.value("queue", "");
    // An array's own row (its elements' rows carry the array's spec too).
    if (!IsArrayElement(row.id) && spec.contains("array") && spec["array"].is_string()) {
      e.array = spec["array"];
    }
  }
  if (e.queue.empty()) e.queue = default_queue;
  const json alloc = json::parse(row.allocation.empty() ? "{}" : row.allocation, nullptr, false);
  if (alloc.is_object()) {
    for (const json& g : alloc.value("hosts", json::array())) {
      if (!g.is_object()) continue;
      e.hosts.emplace_back(g.value("host", ""), g.value("slots", 0));
      e.slots += g.value("slots", 0);
      if (auto gpus = g.find("gpus"); gpus != g.end() && gpus->is_array()) {
        e.gpus += static_cast<int32_t>(gpus->size());
      }
    }
  }
  if (auto steps = wire::DecodeSteps(row.steps)) e.steps = std::move(*steps);  // R-LAUNCH-2
  return e;
}

Result<ordered_json> HistoryPageJson(store::Store& store, const store::HistoryQuery& query,
                                     const std::string& default_queue) {
  Result<store::HistoryPage> page = store.QueryHistory(query);
  if (!page) return page.error();
  ordered_json jobs = ordered_json::array();
  for (const store::HistoryRecord& record : page->records) {
    wire::HistoryEntry entry = HistoryEntryOf(record, default_queue);
    if (!entry.array.empty()) continue;  // an array's own row: its elements are the jobs
    // Newest end first: the job's last run, then its earlier ones (issue 47.6).
    std::vector<wire::HistoryEntry> runs = JobRuns(record.row, std::move(entry));
    for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
      jobs.push_back(wire::HistoryEntryJson(*run));
    }
  }
  ordered_json next = nullptr;
  if (page->more && !page->records.empty()) {
    const store::StoredJob& last = page->records.back().row;
    next = wire::EncodeHistoryCursor(last.end_time, last.id);
  }
  return ordered_json{{"jobs", std::move(jobs)}, {"next_cursor", std::move(next)}};
}

Result<ordered_json> HistorySummaryJson(store::Store& store, store::HistoryQuery query,
                                        const std::string& default_queue) {
  query.limit = kMaxHistoryPage;
  query.after.reset();
  wire::HistorySummary summary;
  while (true) {
    Result<store::HistoryPage> page = store.QueryHistory(query);
    if (!page) return page.error();
    for (const store::HistoryRecord& record : page->records) {
      wire::HistoryEntry entry = HistoryEntryOf(record, default_queue);
      if (!entry.array.empty()) continue;  // an array's own row: not a job
      for (const wire::HistoryEntry& run : JobRuns(record.row, std::move(entry))) {
        summary.Add(run);
      }
    }
    if (!page->more || page->records.empty()) break;
    const store::StoredJob& last = page->records.back().row;
    query.after = std::make_pair(last.end_time, last.id);
  }
  return wire::HistorySummaryJson(summary);
}

// --- HistoryKeeper ------------------------------------------------------------------------------

HistoryKeeper::HistoryKeeper(store::Store* store, Options options, ClockMs clock,
                             std::shared_ptr<spdlog::logger> log)
    : store_(store), options_(options), clock_(std::move(clock)), log_(std::move(log)) {}

int64_t HistoryKeeper::PurgeOnce() {
  if (options_.keep_seconds < 0) return 0;
  const int64_t cutoff = clock_() / 1000 - options_.keep_seconds;
  int64_t total = 0;
  while (true) {
    Result<int64_t> deleted = store_->PurgeHistory(cutoff, options_.chunk);
    if (!deleted) {
      log_->warn("history: purge of jobs ended before {} failed: {}", cutoff,
                 deleted.error().message());
      break;
    }
    total += *deleted;
    if (*deleted < options_.chunk) break;
    std::unique_lock lock(mu_);
    if (stopping_) break;
  }
  if (total > 0) {
    log_->info("history: deleted {} jobs that ended more than {} s ago", total,
               options_.keep_seconds);
  }
  return total;
}

void HistoryKeeper::Start() {
  if (options_.keep_seconds < 0 || thread_.joinable()) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      PurgeOnce();
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                   [&] { return stopping_; });
    }
  });
}

void HistoryKeeper::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// --- Controller's history routes ----------------------------------------------------------------

std::string Controller::DefaultQueueName() {
  std::lock_guard lock(ctx_.mu());
  const core::ClusterState& cs = ctx_.state();
  return cs.topology().queues().empty() ? "" : cs.topology().queues()[cs.topology().default_queue()].spec.name;
}

Result<std::string> Controller::History(const std::map<std::string, std::string>& params) {
  const std::string default_queue = DefaultQueueName();
  Result<store::HistoryQuery> query = ParseHistoryQuery(params, default_queue);
  if (!query) return query.error();
  Result<ordered_json> page = HistoryPageJson(ctx_.writes().store(), *query, default_queue);
  if (!page) return page.error();
  return page->dump();
}

Answer Controller::JobHistory(JobId id) {
  std::optional<store::StoredJob> row;
  std::string default_queue;
  {
    MutexLock lock(ctx_.mu());
    ctx_.writes().AwaitWrites(lock, kReadWaitsForWrites);  // as GET /v1/jobs/ID
    const core::ClusterState& cs = ctx_.state();
    if (!cs.topology().queues().empty()) {
      default_queue = cs.topology().queues()[cs.topology().default_queue()].spec.name;
    }
    if (JobInfo* job = book_.Find(id)) {
      book_.SyncRow(*job);
      row = book_.StoredWithSpec(*job);
    }
  }
  if (!row) {  // forgotten by the controller, kept by the store (R-UX-6)
    Result<store::HistoryPage> page =
        ctx_.writes().store().QueryHistory(store::HistoryQuery{.id = id, .limit = 1});
    if (!page) return page.error();
    if (page->records.empty()) return NotFound("no job " + FormatJobId(id));
    row = page->records.front().row;
  }
  const std::vector<wire::HistoryEntry> runs =
      JobRuns(*row, HistoryEntryOf(store::HistoryRecord{*row}, default_queue));
  json out = {{"id", id}, {"runs", json::array()}};
  for (const wire::HistoryEntry& run : runs) {
    out["runs"].push_back(json(wire::HistoryEntryJson(run)));
  }
  out["timeline"] = json(JobTimeline(*row));
  return out;
}

Result<std::string> Controller::HistorySummary(const std::map<std::string, std::string>& params) {
  const std::string default_queue = DefaultQueueName();
  std::map<std::string, std::string> filters = params;
  if (filters.contains("cursor") || filters.contains("limit")) {
    return InvalidArgument("cursor, limit: the summary totals every matching job");
  }
  Result<store::HistoryQuery> query = ParseHistoryQuery(filters, default_queue);
  if (!query) return query.error();
  Result<ordered_json> summary = HistorySummaryJson(ctx_.writes().store(), *query, default_queue);
  if (!summary) return summary.error();
  return summary->dump();
}

}  // namespace sluice::server
