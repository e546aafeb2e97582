// The Controller's high-availability side (controller.h, "High availability"; docs/ha.md):
// taking over from the store, stepping down, resyncing after a write the store could not
// take, and the history retention. R-HA-1, R-HA-3, R-HA-4, R-HA-5.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "server/controller.h"
#include "server/memory_release.h"

namespace sluice::server {

namespace {

constexpr size_t kRowsPerBatch = 1000;  // well below the etcd store's txn limits
constexpr int64_t kPurgeEveryMs = 30'000;
constexpr int64_t kResyncRetryMs = 1'000;  // while the disk stays full

}  // namespace

Status Controller::TakeOver() {
  const int64_t start_ms = ctx_.NowMs();  // "first cycle, N ms after taking over" counts the load
  Result<store::Snapshot> snap = ctx_.writes().store().LoadAllButJobs();
  if (!snap) return snap.error();
  if (snap->schema.upgraded()) {  // R-OPS-5: the store upgraded it in place, before the read
    ctx_.log().info("upgraded state {} from schema {} to {}", ctx_.writes().store().dir(),
                    snap->schema.found, store::kSchemaVersion);
  }
  {
    std::lock_guard lock(ctx_.mu());
    ctx_.writes().BeginEpoch();
    start_ms_ = start_ms;
  }
  SLUICE_RETURN_IF_ERROR(Restore(*snap));
  // What the restart read and freed goes back to the system (issue 45: otherwise it stays
  // resident as the heap's free memory).
  *snap = store::Snapshot{};
  ReleaseFreedMemory();
  ctx_.writes().store().Flush();  // a full disk: read-only from the start (StoreWriter::Failed)
  std::optional<PendingReload> reload;
  {
    std::lock_guard lock(ctx_.mu());
    taken_over_ = true;  // a reload from now on is a leader's
    reload.swap(reload_when_leading_);
  }
  if (reload) {  // the file a SIGHUP checked while this controller was a standby
    Answer reply = ApplyReload(std::move(reload->config), std::move(reload->auth));
    if (reply.ok()) {
      ctx_.log().info("the configuration reloaded while a standby is in force: {}", reply->dump());
    } else {
      ctx_.log().error("the configuration reloaded while a standby is refused now: {}",
                       reply.failure() ? reply.failure()->message() : reply.refusal()->message);
    }
  }
  return Status::Ok();
}

void Controller::StepDown(const Status& why) {
  if (!ctx_.writes().Depose()) return;
  ctx_.log().critical("epoch {}: deposed ({}); stepping down: no more writes, launches or cycles",
                     ctx_.writes().store().epoch(), why.message());
  ctx_.log().flush();
  ctx_.cycle().Wake();
  ctx_.wakeups().WakeAll();
}

int64_t Controller::FirstCycleMs() {
  std::lock_guard lock(ctx_.mu());
  return first_cycle_ms_;
}

int64_t Controller::ConnectedAgents() {
  std::lock_guard lock(ctx_.mu());
  return agents_.ConnectedCount();
}

void Controller::NoteCycleLocked() {
  if (first_cycle_ms_ != 0) return;
  first_cycle_ms_ = ctx_.NowMs();
  ctx_.log().info("epoch {}: first cycle, {} ms after taking over", ctx_.writes().epoch(),
                  first_cycle_ms_ - start_ms_);
}

// Steps: 1. wait until the store leads again (quorum back) and this controller was not
// deposed, at most one attempt per kResyncRetryMs (a full disk fails until space returns);
// 2. queue every job row as memory has it, deletes of withdrawn submissions and the next job
// id (ids taken by submissions that were never stored are not given again, even after a
// restart), and every host row and override (ClusterSettings::Rows), in batches (each row is
// whole, so the last write of each is the truth); 3. clear
// `resync` before the commits: they are queued ahead of any later write, and a failure sets
// it again.
void Controller::ResyncLocked() {
  StoreWriter& writes = ctx_.writes();
  if (!writes.ResyncDue() || writes.deposed() || writes.store().role() != store::Role::kLeader) {
    return;
  }
  if (ctx_.NowMs() < next_resync_ms_) return;
  next_resync_ms_ = ctx_.NowMs() + kResyncRetryMs;
  ctx_.log().log(writes.DiskFault() ? spdlog::level::debug : spdlog::level::info,
                 "epoch {}: rewriting {} job rows to the store", writes.epoch(),
                 book_.jobs().size());
  writes.ResyncQueued();
  // Host rows and overrides too: a configured host's agent may have registered meanwhile
  // (its detected GPUs, or the close of a host whose GPUs differ, were in a failed write).
  store::WriteBatch batch = settings_.Rows();
  reservations_.AddRows(batch);  // issue 42
  batch.deleted_jobs = writes.withdrawn();  // kept until the resync commits (it may fail again)
  batch.settings[std::string(JobBook::kNextIdSetting)] = book_.next_id();
  for (const auto& [id, job] : book_.jobs()) {
    batch.jobs.push_back(job->Stored());
    if (batch.jobs.size() < kRowsPerBatch) continue;
    writes.Write(std::exchange(batch, {}));
  }
  // Once every row committed, the launches and kills whose rows were in a failed write may go.
  writes.Write(std::move(batch), [this, deleted = writes.withdrawn().size()] {
    ctx_.writes().ForgetWithdrawn(deleted);
    ctx_.writes().Recovered();
    for (const auto& [id, job] : book_.jobs()) {
      if (job->phase() == core::AdmissionPhase::kAdmitting) job->launch_ready = true;
      if (job->BeingPreempted()) job->preempt_committed = true;
    }
  });
  ctx_.cycle().MarkDirty();
}

// For stores that do not purge themselves (etcd; SQLite's is HistoryKeeper's). Steps: 1. at
// most every kPurgeEveryMs, note the ended jobs in memory (each is seen before ForgetEnded
// drops it: that takes at least 60 s); 2. delete the rows of those ended more than
// keep_history_seconds ago, in batches.
void Controller::PurgeHistoryLocked() {
  const int64_t keep = ctx_.options().keep_history_seconds;
  if (keep < 0 || ctx_.writes().store().PurgesHistory()) return;  // HistoryKeeper's (history_api.h)
  if (ctx_.NowMs() - last_purge_ms_ < kPurgeEveryMs) return;
  last_purge_ms_ = ctx_.NowMs();
  for (const auto& [id, job] : book_.jobs()) {
    if (job->phase() == core::AdmissionPhase::kEnded) history_.insert({job->row.end_time, id});
  }
  const Instant cutoff = ctx_.Now() - keep;
  store::WriteBatch batch;
  size_t purged = 0;
  while (!history_.empty() && history_.begin()->first <= cutoff) {
    batch.deleted_jobs.push_back(history_.begin()->second);
    history_.erase(history_.begin());
    ++purged;
    if (batch.deleted_jobs.size() >= kRowsPerBatch) ctx_.writes().Write(std::exchange(batch, {}));
  }
  if (!batch.empty()) ctx_.writes().Write(std::move(batch));
  if (purged > 0) {
    ctx_.log().info("retention: deleted {} ended jobs' rows (ended over {} s ago)", purged, keep);
  }
}

void Controller::PurgeHistoryNow() {
  if (ctx_.writes().store().PurgesHistory()) {
    keeper_.PurgeOnce();
    return;
  }
  std::lock_guard lock(ctx_.mu());
  last_purge_ms_ = 0;
  PurgeHistoryLocked();
}

}  // namespace sluice::server
