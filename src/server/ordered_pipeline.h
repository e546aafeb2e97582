// OrderedPipeline: read, prepare and apply chunks of work at once, applying them in the order
// read (issue 45: a restart's million job rows were read, parsed and restored one after the
// other on one core, 20 s). One reader thread reads chunks (`read` calls `emit` for each);
// `workers` threads prepare any chunk read (`prepare`, e.g. parse specs); the calling thread
// applies the prepared chunks strictly in the order they were read (`apply`), so its outcome
// is a sequential run's. While the next chunk to apply is not ready, the caller prepares one
// too rather than wait (so one core suffices, and two are both busy).
//
// Memory: at most `max_in_flight` chunks are read and not yet applied; the reader waits.
// Errors: Run returns `read`'s status once every chunk emitted before it returned is applied.
// Thread-safety: Run is one blocking call. `prepare` runs on several threads at once and
// must not throw; `read` and `apply` each run on one thread. The caller may hold locks of a
// lower rank than kPipeline (a restart holds the controller's) that `prepare` and `read` do
// not take.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace sluice::server {

template <typename In, typename Out>
class OrderedPipeline {
 public:
  using Emit = std::function<void(In&&)>;
  struct Stages {
    std::function<Status(const Emit& emit)> read;
    std::function<Out(In&&)> prepare;
    std::function<void(Out&&)> apply;
  };

  static Status Run(const Stages& stages, int workers, size_t max_in_flight) {
    OrderedPipeline pipeline(stages, std::max<size_t>(max_in_flight, 1));
    return pipeline.RunAll(std::max(workers, 0));
  }

 private:
  OrderedPipeline(const Stages& stages, size_t max_in_flight)
      : stages_(stages), max_in_flight_(max_in_flight) {}

  Status RunAll(int workers) {
    Status read_status = Status::Ok();
    std::thread reader([&] {
      read_status = stages_.read([this](In&& chunk) { Push(std::move(chunk)); });
      MutexLock lock(mu_);
      reading_done_ = true;
      changed_.notify_all();
    });
    std::vector<std::thread> preparers;
    for (int i = 0; i < workers; ++i) {
      preparers.emplace_back([this] { PrepareAll(); });
    }
    ApplyAll();
    reader.join();
    for (std::thread& t : preparers) t.join();
    return read_status;
  }

  void Push(In&& chunk) {
    MutexLock lock(mu_);
    changed_.wait(lock, [this]() SLUICE_NO_THREAD_SAFETY_ANALYSIS {
      return read_ - applied_ < max_in_flight_;
    });
    unprepared_.emplace_back(read_++, std::move(chunk));
    changed_.notify_all();
  }

  // A preparer's loop: until reading is over and no chunk is left to prepare.
  void PrepareAll() {
    MutexLock lock(mu_);
    for (;;) {
      changed_.wait(lock, [this]() SLUICE_NO_THREAD_SAFETY_ANALYSIS {
        return !unprepared_.empty() || reading_done_;
      });
      if (unprepared_.empty()) return;
      PrepareFront(lock);
    }
  }

  // Prepares the oldest unprepared chunk, without the lock while it works. REQUIRES `lock`
  // held and a chunk in unprepared_; holds it again on return.
  void PrepareFront(MutexLock& lock) {
    auto [seq, chunk] = std::move(unprepared_.front());
    unprepared_.pop_front();
    lock.unlock();
    Out out = stages_.prepare(std::move(chunk));
    lock.lock();
    prepared_.emplace(seq, std::move(out));
    changed_.notify_all();
  }

  void ApplyAll() {
    for (;;) {
      std::optional<Out> next;
      {
        MutexLock lock(mu_);
        for (;;) {
          if (auto it = prepared_.find(applied_); it != prepared_.end()) {
            next.emplace(std::move(it->second));
            prepared_.erase(it);
            break;
          }
          if (reading_done_ && applied_ == read_) return;
          if (!unprepared_.empty()) {  // help rather than wait
            PrepareFront(lock);
            continue;
          }
          changed_.wait(lock);
        }
      }
      stages_.apply(std::move(*next));
      MutexLock lock(mu_);
      ++applied_;
      changed_.notify_all();  // the reader may read on
    }
  }

  const Stages& stages_;
  const size_t max_in_flight_;
  Mutex mu_{LockRank::kPipeline};
  std::condition_variable_any changed_;  // any of the members below changed
  std::deque<std::pair<uint64_t, In>> unprepared_ SLUICE_GUARDED_BY(mu_);
  std::map<uint64_t, Out> prepared_ SLUICE_GUARDED_BY(mu_);
  uint64_t read_ SLUICE_GUARDED_BY(mu_) = 0;     // chunks emitted
  uint64_t applied_ SLUICE_GUARDED_BY(mu_) = 0;  // chunks applied
  bool reading_done_ SLUICE_GUARDED_BY(mu_) = false;
};

}  // namespace sluice::server
