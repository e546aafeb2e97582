#include "server/store_writer.h"

#include <cstdlib>
#include <functional>
#include <future>
#include <string>
#include <utility>

namespace sluice::server {

void StoreWriter::Failed(const Status& status) {
  if (status.code() == StatusCode::kUnavailable ||
      status.code() == StatusCode::kResourceExhausted) {
    resync_ = true;
    std::lock_guard lock(fault_mu_);
    if (status.code() == StatusCode::kResourceExhausted) disk_fault_ = true;
    if (fault_.empty()) {  // once per episode: the retries fail the same way
      fault_since_ms_ = NowMs();
      log_->error("store write failed: {}; writes, launches and cycles wait for the store",
                  status.message());
    }
    fault_ = status.message();
    return;
  }
  log_->critical("store write failed: {}; stopping", status.message());
  log_->flush();
  std::_Exit(3);
}

std::string StoreWriter::Fault() const {
  std::lock_guard lock(fault_mu_);
  return fault_;
}

void StoreWriter::Recovered() {
  std::lock_guard lock(fault_mu_);
  if (fault_.empty()) return;
  log_->warn("store writable again after {} ms ({}); writes, launches and cycles resume",
             NowMs() - fault_since_ms_, fault_);
  fault_.clear();
  disk_fault_ = false;
}

void StoreWriter::ForgetWithdrawn(size_t n) {
  withdrawn_.erase(withdrawn_.begin(), withdrawn_.begin() + static_cast<std::ptrdiff_t>(n));
}

std::vector<SpecWritten> StoreWriter::SpecsOf(const store::WriteBatch& batch) const {
  std::vector<SpecWritten> specs;
  if (!specs_stored_ || !store_->ServesSpecs()) return specs;
  for (const store::StoredJob& row : batch.jobs) {
    if (!row.spec.empty()) specs.push_back({row.id, std::hash<std::string>{}(row.spec)});
  }
  return specs;
}

void StoreWriter::Committed(const Status& status, const std::vector<SpecWritten>& specs) {
  if (status.ok() && !specs.empty()) specs_stored_(specs);
  ++writes_ended_;
}

void StoreWriter::Write(store::WriteBatch batch, std::function<void()> then) {
  ++writes_begun_;
  std::vector<SpecWritten> specs = SpecsOf(batch);
  store_->Write(std::move(batch), [this, then = std::move(then),
                                   specs = std::move(specs)](const Status& status) {
    if (!status.ok()) Failed(status);  // returns only for kUnavailable, kResourceExhausted
    {
      std::lock_guard lock(mu_);
      if (then && status.ok()) then();
      Committed(status, specs);
      if (after_commit_) after_commit_();
    }
    writes_cv_.notify_all();
  });
}

bool StoreWriter::WaitCommitted(MutexLock& lock) {
  lock.unlock();
  store_->Flush();
  lock.lock();
  return !resync_;
}

void StoreWriter::AwaitWrites(MutexLock& lock, std::chrono::milliseconds limit) {
  writes_cv_.wait_for(lock, limit, [this]() SLUICE_NO_THREAD_SAFETY_ANALYSIS {
    return writes_ended_ >= writes_begun_ || stopping_;
  });
}

void StoreWriter::Stop() {
  stopping_ = true;
  writes_cv_.notify_all();
}

Status StoreWriter::WriteAndWait(MutexLock& lock, store::WriteBatch batch) {
  auto done = std::make_shared<std::promise<Status>>();
  std::future<Status> future = done->get_future();
  ++writes_begun_;
  std::vector<SpecWritten> specs = SpecsOf(batch);
  // Queued in order under the lock; committed on this thread once the lock is released
  // (store.h, WriteForCaller): the reply waits for the fsync and nothing else.
  store_->WriteForCaller(std::move(batch), [this, done,
                                            specs = std::move(specs)](const Status& status) {
    if (!status.ok()) Failed(status);
    done->set_value(status);  // first: the waiting request answers without waiting for the lock
    {
      std::lock_guard ended(mu_);
      Committed(status, specs);
    }
    writes_cv_.notify_all();
  });
  lock.unlock();
  store_->CommitOnCaller();
  Status status = future.get();
  lock.lock();
  if (status.code() == StatusCode::kResourceExhausted) {
    return Status(StatusCode::kUnavailable, status.message());  // 503: retry once space returns
  }
  return status;
}

}  // namespace sluice::server
