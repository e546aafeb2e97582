// The /v1/events delivery (server/sse_queue.h): a frame is built once per event in the same
// text as before, and every reader receives every frame exactly once, in order, however the
// pushes and the batched takes interleave.
#include "server/sse_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace sluice::server {
namespace {

using namespace std::chrono_literals;

TEST(SseQueueTest, AFramesTextIsTheEventsJson) {
  JobEvent pending{.id = 7, .state = "PENDING", .reason = "NEW_JOB"};
  EXPECT_EQ(SseFrameOf(pending),
            "event: job\ndata: {\"id\":7,\"reason\":\"NEW_JOB\",\"state\":\"PENDING\"}\n\n");
  JobEvent done{.id = 8, .state = "DONE", .cpu_seconds = 1.5, .max_rss_mb = 2.0};
  EXPECT_EQ(SseFrameOf(done),
            "event: job\ndata: {\"cpu_seconds\":1.5,\"id\":8,\"max_rss_mb\":2.0,\"reason\":null,"
            "\"state\":\"DONE\"}\n\n");
}

TEST(SseQueueTest, TheSharedFrameIsBuiltOnceForEveryReader) {
  JobEvent event{.id = 9, .state = "RUNNING"};
  const std::string& first = SharedSseFrame(event);
  EXPECT_EQ(first, SseFrameOf(event));
  event.state = "DONE";  // a later reader gets the frame built first, not a new one
  EXPECT_EQ(&SharedSseFrame(event), &first);
  EXPECT_NE(SharedSseFrame(event).find("RUNNING"), std::string::npos);
}

TEST(SseQueueTest, EveryReaderReceivesEveryFrameExactlyOnceInOrder) {
  constexpr int kReaders = 3;
  constexpr int kFrames = 20'000;
  std::vector<std::shared_ptr<SseQueue>> queues;
  for (int i = 0; i < kReaders; ++i) queues.push_back(std::make_shared<SseQueue>());
  std::string expected;
  for (int i = 0; i < kFrames; ++i) expected += "f" + std::to_string(i) + "\n";
  std::vector<std::string> received(kReaders);
  std::atomic<bool> stop = false;
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      const auto give_up = std::chrono::steady_clock::now() + 20s;
      while (received[r].size() < expected.size() && std::chrono::steady_clock::now() < give_up) {
        received[r] += queues[r]->Take(50ms, r == 0 ? 0ms : 1ms, [&] { return stop.load(); });
      }
    });
  }
  for (int i = 0; i < kFrames; ++i) {
    const std::string frame = "f" + std::to_string(i) + "\n";
    for (auto& q : queues) q->Push(frame);
    if (i % 1000 == 0) std::this_thread::sleep_for(1ms);  // readers catch up, then wait again
  }
  for (std::thread& t : readers) t.join();
  stop = true;
  for (int r = 0; r < kReaders; ++r) {
    EXPECT_EQ(received[r], expected) << "reader " << r;
    EXPECT_FALSE(queues[r]->overflow());
  }
}

TEST(SseQueueTest, AReaderTooFarBehindOverflowsAndGetsNothingMore) {
  SseQueue queue;
  for (size_t i = 0; i < SseQueue::kMaxFrames; ++i) queue.Push("x");
  EXPECT_FALSE(queue.overflow());
  queue.Push("y");
  EXPECT_TRUE(queue.overflow());
  EXPECT_EQ(queue.Take(0ms, 0ms, [] { return false; }), "");
}

TEST(SseQueueTest, AReaderHoldsAtMostAMebibyteOfFrames) {
  SseQueue queue;
  const std::string frame(1000, 'x');
  for (size_t i = 0; i < SseQueue::kMaxBytes / frame.size(); ++i) queue.Push(frame);
  EXPECT_FALSE(queue.overflow());
  queue.Push(frame);
  EXPECT_TRUE(queue.overflow());
  EXPECT_NE(SseQueue::kOverflowFrame.find("event: overflow"), std::string_view::npos);
}

}  // namespace
}  // namespace sluice::server
