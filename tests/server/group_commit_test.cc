// Group commit of single submissions (R-SRV-1; issue 21, the submit loop): submissions that
// arrive together share commits, each is acknowledged only once its commit is done, and every
// acknowledged one is there after a crash.
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using ::sluice::testing::TempDir;
using testing::ControllerHarness;

TEST(GroupCommitTest, ConcurrentSubmissionsShareCommitsAndSurviveACrash) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const int64_t commits_before = h.store().stats().transactions;
  constexpr int kThreads = 8;
  constexpr int kEach = 25;
  std::mutex mu;
  std::set<JobId> acknowledged;
  std::atomic<int> refused = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        Reply r = h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"hold", true}});
        if (r.status != 201) {
          ++refused;
          continue;
        }
        std::lock_guard lock(mu);
        acknowledged.insert(r.body["id"].get<JobId>());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(refused, 0);
  ASSERT_EQ(acknowledged.size(), static_cast<size_t>(kThreads * kEach));
  const int64_t commits = h.store().stats().transactions - commits_before;
  EXPECT_LT(commits, kThreads * kEach) << "every submission had a commit of its own";

  h.Close();  // as a crash leaves it: only what was committed stays
  h.Open();
  for (JobId id : acknowledged) {
    EXPECT_EQ(h.State(id), "HELD") << "acknowledged job " << id << " lost";
  }
}

}  // namespace
}  // namespace sluice::server
