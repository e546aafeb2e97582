// Test helper for "the reply was lost" scenarios: an HTTP handler of a test server holds its
// reply at the gate until the test opens it, i.e. until the client under test has given up
// waiting. A reply that is merely slow (a handler sleeping longer than the client's timeout)
// races the client's clock, and on a loaded machine the client, scheduled late, still saw it.
//
//   ReplyGate gate;
//   handler: gate.Hold(); res.set_content(...);
//   test:    EXPECT_FALSE(client.Post(...));  // timed out: the reply was held
//            gate.Open();                      // before the server stops (the destructor too)
//
// Thread-safety: Hold() runs on server threads, Open() on the test's; both lock `mu_`.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace sluice::testing {

class ReplyGate {
 public:
  ReplyGate() = default;
  ~ReplyGate() { Open(); }
  ReplyGate(const ReplyGate&) = delete;
  ReplyGate& operator=(const ReplyGate&) = delete;

  // Blocks until Open(), for at most `limit` (a test that fails before it opens the gate must
  // still let its server stop).
  void Hold(std::chrono::seconds limit = std::chrono::seconds(60)) {
    std::unique_lock lock(mu_);
    opened_cv_.wait_for(lock, limit, [this] { return open_; });
  }

  void Open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    opened_cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable opened_cv_;
  bool open_ = false;
};

}  // namespace sluice::testing
