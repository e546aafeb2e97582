// ReleaseFreedMemory (server/memory_release.h): the pages a thread's burst freed leave the
// process's resident memory once that thread releases them, although the thread then stays
// idle (issue 45: the HTTP worker of the last batch, the scheduling thread and the estimator
// kept 60-110 MB resident at a million pending jobs). Built twice (CMakeLists.txt): against
// mimalloc, as sluice-full is, and against glibc's malloc.
#include "server/memory_release.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace sluice::server {
namespace {

constexpr size_t kBlock = 320;             // a parsed body's tree nodes, a job record's size
constexpr size_t kBurstBytes = 96u << 20;  // what one large batch or cycle leaves freed
constexpr int64_t kMiB = 1 << 20;

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  int64_t resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// A thread that runs `work`, then stays alive and idle (as a pool's worker does) until the
// test ends it, so that its heap is not given up by its exit.
class IdleAfterWork {
 public:
  explicit IdleAfterWork(std::function<void()> work)
      : thread_([this, work = std::move(work)] {
          work();
          std::unique_lock lock(mu_);
          worked_ = true;
          cv_.notify_all();
          cv_.wait(lock, [this] { return end_; });
        }) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return worked_; });
  }
  ~IdleAfterWork() {
    {
      std::lock_guard lock(mu_);
      end_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool worked_ = false;
  bool end_ = false;
  std::thread thread_;
};

std::vector<std::unique_ptr<char[]>> Allocate(size_t bytes) {
  std::vector<std::unique_ptr<char[]>> blocks;
  blocks.reserve(bytes / kBlock);
  for (size_t i = 0; i < bytes / kBlock; ++i) {
    blocks.emplace_back(new char[kBlock]);
    std::memset(blocks.back().get(), 1, kBlock);  // resident, as the server's data is
  }
  return blocks;
}

TEST(MemoryReleaseTest, ThePagesOfABurstLeaveTheResidentMemoryWhenItsThreadReleasesThem) {
  const int64_t before = ResidentBytes();
  int64_t during = 0;
  IdleAfterWork worker([&] {
    std::vector<std::unique_ptr<char[]>> blocks = Allocate(kBurstBytes);
    during = ResidentBytes();
    blocks.clear();
    ReleaseFreedMemory();
  });
  ASSERT_GE(during - before, int64_t{kBurstBytes} * 9 / 10) << "the burst was not resident";
  // The worker is idle and alive; what it freed is no longer resident.
  EXPECT_LT(ResidentBytes() - before, 16 * kMiB)
      << "before " << before / kMiB << " MiB, during " << during / kMiB << " MiB";
}

TEST(MemoryReleaseTest, WhatTheThreadStillHoldsStaysUsableFromAnyThread) {
  std::vector<std::unique_ptr<char[]>> kept;
  IdleAfterWork worker([&] {
    std::vector<std::unique_ptr<char[]>> blocks = Allocate(8u << 20);
    for (size_t i = 0; i < blocks.size(); i += 2) kept.push_back(std::move(blocks[i]));
    blocks.clear();
    ReleaseFreedMemory();
    // The thread allocates again after its release, and frees some of what it kept.
    std::vector<std::unique_ptr<char[]>> again = Allocate(1u << 20);
    for (size_t i = 0; i < 100; ++i) kept[i].reset();
  });
  size_t intact = 0;
  for (const std::unique_ptr<char[]>& block : kept) {
    if (block != nullptr && block[0] == 1 && block[kBlock - 1] == 1) ++intact;
  }
  EXPECT_EQ(intact, kept.size() - 100);
  kept.clear();  // freed from another thread than the one that allocated them
  std::vector<std::unique_ptr<char[]>> fresh = Allocate(1u << 20);
  EXPECT_EQ(fresh.back()[0], 1);
}

TEST(MemoryReleaseTest, AReleaseIsOwedByTheThreadThatNotedItAndOnlyOnce) {
  EXPECT_FALSE(ReleaseOwed());
  OweRelease();
  bool seen_elsewhere = true;
  std::thread([&] { seen_elsewhere = ReleaseOwed(); }).join();
  EXPECT_FALSE(seen_elsewhere);
  EXPECT_TRUE(ReleaseOwed());
  EXPECT_FALSE(ReleaseOwed());
  OweRelease();
  ReleaseFreedMemory();  // pays what was owed
  EXPECT_FALSE(ReleaseOwed());
}

}  // namespace
}  // namespace sluice::server
