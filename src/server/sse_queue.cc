#include "server/sse_queue.h"

#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

namespace sluice::server {

using nlohmann::json;

std::string SseFrameOf(const JobEvent& e) {
  json data = {
      {"id", e.id}, {"state", e.state}, {"reason", e.reason ? json(*e.reason) : json(nullptr)}};
  if (e.cpu_seconds) data["cpu_seconds"] = *e.cpu_seconds;  // R-SEC-4
  if (e.max_rss_mb) data["max_rss_mb"] = *e.max_rss_mb;
  return "event: job\ndata: " + data.dump() + "\n\n";
}

const std::string& SharedSseFrame(const JobEvent& event) {
  if (event.sse_frame.empty()) event.sse_frame = SseFrameOf(event);
  return event.sse_frame;
}

void SseQueue::Push(std::string_view frame) {
  std::lock_guard lock(mu_);
  if (overflow_) return;
  if (count_ >= kMaxFrames || frames_.size() + frame.size() > kMaxBytes) {
    overflow_ = true;
    frames_.clear();
    frames_.shrink_to_fit();
    cv_.notify_one();
    return;
  }
  const bool was_empty = count_ == 0;
  frames_.append(frame);
  ++count_;
  if (was_empty) cv_.notify_one();  // otherwise the reader is awake or about to take them
}

std::string SseQueue::Take(std::chrono::milliseconds wait, std::chrono::milliseconds gather,
                           const std::function<bool()>& stopping) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, wait, [&] { return count_ > 0 || overflow_ || stopping(); });
  if (count_ == 0 || overflow_) return "";
  if (gather.count() > 0) {  // let a burst gather: one write for many frames
    lock.unlock();
    std::this_thread::sleep_for(gather);
    lock.lock();
  }
  count_ = 0;
  return std::exchange(frames_, {});
}

bool SseQueue::overflow() {
  std::lock_guard lock(mu_);
  return overflow_;
}

}  // namespace sluice::server
