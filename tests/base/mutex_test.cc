// The lock order check (base/mutex.h): mutexes taken in rank order are fine, one taken out of
// order or twice aborts naming the locks, and waits on a condition variable keep the
// thread's record of what it holds exact.
#include "base/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <thread>

namespace sluice {
namespace {

TEST(MutexTest, LocksInRankOrderAreTakenAndReleased) {
  Mutex outer(LockRank::kController);
  Mutex inner(LockRank::kStoreQueue);
  {
    std::lock_guard a(outer);
    EXPECT_TRUE(outer.HeldByThisThread());
    std::lock_guard b(inner);
    EXPECT_TRUE(inner.HeldByThisThread());
  }
  EXPECT_FALSE(outer.HeldByThisThread());
  EXPECT_FALSE(inner.HeldByThisThread());
  // Released in any order, then taken again.
  MutexLock a(outer);
  MutexLock b(inner);
  a.unlock();
  b.unlock();
  std::lock_guard again(outer);
}

TEST(MutexDeathTest, ALockTakenOutOfOrderAbortsNamingBoth) {
  Mutex outer(LockRank::kController);
  Mutex inner(LockRank::kStoreQueue);
  EXPECT_DEATH(
      {
        std::lock_guard b(inner);
        std::lock_guard a(outer);
      },
      "acquiring controller while holding store queue");
}

TEST(MutexDeathTest, ALockTakenTwiceByOneThreadAborts) {
  Mutex mu(LockRank::kAuth);
  EXPECT_DEATH(
      {
        std::lock_guard a(mu);
        std::lock_guard b(mu);
      },
      "acquiring auth while holding auth");
}

TEST(MutexTest, AWaitReleasesAndRetakesTheLockInTheRecord) {
  Mutex mu(LockRank::kController);
  std::condition_variable_any cv;
  bool ready = false;
  std::thread other([&] {
    std::lock_guard lock(mu);
    ready = true;
    cv.notify_all();
  });
  MutexLock lock(mu);
  cv.wait(lock, [&] { return ready; });
  EXPECT_TRUE(mu.HeldByThisThread());
  lock.unlock();
  other.join();
  EXPECT_FALSE(mu.HeldByThisThread());
}

TEST(MutexTest, EveryRankHasAName) {
  for (int rank = 0; rank <= static_cast<int>(LockRank::kDrmaaSession); ++rank) {
    SCOPED_TRACE(rank);
    EXPECT_STRNE(ToString(static_cast<LockRank>(rank)), "?");
  }
}

}  // namespace
}  // namespace sluice
