// The /v1/events stream's delivery (R-SRV-4's SSE): each job event is turned into its frame
// once (SseFrameOf, cached in the JobEvent for every reader), and each reader has an
// SseQueue the controller appends to and the connection's thread takes from in batches.
//
// Why batches: at thousands of transitions a second, a wake-up and a socket write per event
// per reader were ~8 % of the server's CPU in context switches (docs/performance.md). A push
// wakes the reader only when its queue was empty (otherwise it is awake or about to take
// them), and a reader that woke lets frames gather for a short moment before it takes them
// all at once: a few dozen writes a second, whatever the event rate.
// Thread-safety: Push and Take may be called from different threads (the queue's own mutex).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "server/job_book.h"

namespace sluice::server {

// `event: job\ndata: {"id":..,"state":..,"reason":..[,"cpu_seconds":..,"max_rss_mb":..]}\n\n`
std::string SseFrameOf(const JobEvent& event);
// The event's frame, built at the first call (readers share it; JobBook emits under its
// mutex, so the listeners run one at a time).
const std::string& SharedSseFrame(const JobEvent& event);

class SseQueue {
 public:
  // A reader this far behind is dropped rather than let the queue grow: at most this many
  // frames or bytes wait for it (issue 48: a slow reader held 5.7 MB at 100,000 frames).
  static constexpr size_t kMaxFrames = 10'000;
  static constexpr size_t kMaxBytes = 1 << 20;
  // The last frame an overflowed reader gets, saying why the stream ends.
  static constexpr std::string_view kOverflowFrame =
      "event: overflow\ndata: {\"reason\":\"this reader fell more than 10000 events or 1 MiB "
      "behind; reconnect and read the current state from /v1/jobs\"}\n\n";

  // Appends one frame; beyond kMaxFrames or kMaxBytes the queue overflows instead (its frames
  // are dropped and it stays so).
  void Push(std::string_view frame);
  // Waits up to `wait` for a frame (or `stopping()`); once one is there, lets more gather for
  // `gather`; returns every frame queued, in order ("" when none came).
  std::string Take(std::chrono::milliseconds wait, std::chrono::milliseconds gather,
                   const std::function<bool()>& stopping);
  bool overflow();

 private:
  Mutex mu_{LockRank::kEventQueue};
  std::condition_variable_any cv_;
  std::string frames_;  // guarded by mu_
  size_t count_ = 0;    // frames in frames_
  bool overflow_ = false;
};

}  // namespace sluice::server
