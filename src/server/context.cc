#include "server/context.h"

#include <cstdlib>
#include <future>
#include <utility>

namespace sluice::server {

ServerContext::ServerContext(core::ClusterState state_in, store::Store* store_in,
                             ControllerOptions options_in, ClockMs clock,
                             std::shared_ptr<spdlog::logger> log_in)
    : state(std::move(state_in)),
      store(store_in),
      options(std::move(options_in)),
      log(std::move(log_in)),
      clock_(std::move(clock)) {}

Status ServerContext::ApplyLocked(const core::Event& event, const std::string& what) {
  Status s = core::Apply(event, Now(), state);
  if (!s.ok() && !what.empty()) log->error("{}: {}", what, s.message());
  return s;
}

void ServerContext::MarkDirty() {
  dirty = true;
  ++changes;
  if (!cycle_armed) cycle_cv.notify_all();
}

bool ServerContext::WaitCommitted(std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  store->Flush();
  lock.lock();
  return !resync;
}

bool ServerContext::Writable() const {
  return !deposed && !resync && store->role() == store::Role::kLeader;
}

std::string ServerContext::StoreFault() const {
  std::lock_guard lock(fault_mu_);
  return fault_;
}

void ServerContext::StoreRecovered() {
  std::lock_guard lock(fault_mu_);
  if (fault_.empty()) return;
  log->warn("store writable again after {} ms ({}); writes, launches and cycles resume",
            NowMs() - fault_since_ms_, fault_);
  fault_.clear();
  disk_fault_ = false;
}

void ServerContext::WriteFailed(const Status& status) {
  if (status.code() == StatusCode::kUnavailable ||
      status.code() == StatusCode::kResourceExhausted) {
    resync = true;
    std::lock_guard lock(fault_mu_);
    if (status.code() == StatusCode::kResourceExhausted) disk_fault_ = true;
    if (fault_.empty()) {  // once per episode: the retries fail the same way
      fault_since_ms_ = NowMs();
      log->error("store write failed: {}; writes, launches and cycles wait for the store",
                 status.message());
    }
    fault_ = status.message();
    return;
  }
  log->critical("store write failed: {}; stopping", status.message());
  log->flush();
  std::_Exit(3);
}

void ServerContext::WriteLocked(store::WriteBatch batch, std::function<void()> then) {
  ++writes_begun;
  store->Write(std::move(batch), [this, then = std::move(then)](const Status& status) {
    if (!status.ok()) WriteFailed(status);  // returns only for kUnavailable
    {
      std::lock_guard lock(mu);
      if (then && status.ok()) then();
      ++writes_ended;
    }
    writes_cv.notify_all();
    work_cv.notify_all();
  });
}

void ServerContext::AwaitWrites(std::unique_lock<std::mutex>& lock,
                                std::chrono::milliseconds limit) {
  writes_cv.wait_for(lock, limit, [this] { return writes_ended >= writes_begun || stopping; });
}

Status ServerContext::WriteAndWait(std::unique_lock<std::mutex>& lock, store::WriteBatch batch) {
  auto done = std::make_shared<std::promise<Status>>();
  std::future<Status> future = done->get_future();
  ++writes_begun;
  // Queued in order under `mu`; committed on this thread once `mu` is released (store.h,
  // WriteForCaller): the reply waits for the fsync and nothing else.
  store->WriteForCaller(std::move(batch), [this, done](const Status& status) {
    if (!status.ok()) WriteFailed(status);
    done->set_value(status);  // first: the waiting request answers without waiting for `mu`
    {
      std::lock_guard ended(mu);
      ++writes_ended;
    }
    writes_cv.notify_all();
  });
  lock.unlock();
  store->CommitOnCaller();
  Status status = future.get();
  lock.lock();
  if (status.code() == StatusCode::kResourceExhausted) {
    return Status(StatusCode::kUnavailable, status.message());  // 503: retry once space returns
  }
  return status;
}

}  // namespace sluice::server
