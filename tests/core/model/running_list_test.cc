// RunningList: start order kept across erases and compactions, forward and reverse, against
// the std::set it replaced.
#include "core/model/running_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <iterator>
#include <random>
#include <set>
#include <vector>

namespace sluice::core {
namespace {

std::vector<uint64_t> Forward(const RunningList& list) {
  std::vector<uint64_t> seqs;
  for (const RunningEntry& entry : list) seqs.push_back(entry.start_seq);
  return seqs;
}

std::vector<uint64_t> Backward(const RunningList& list) {
  std::vector<uint64_t> seqs;
  for (auto it = list.rbegin(); it != list.rend(); ++it) seqs.push_back(it->start_seq);
  return seqs;
}

class RunningListTest : public ::testing::Test {
 protected:
  // Jobs never move (a deque grows without relocating them), like the job table's.
  Job* NewJob() { return &jobs_.emplace_back(); }

 private:
  std::deque<Job> jobs_;
};

TEST_F(RunningListTest, EmptyHasNothingEitherWay) {
  RunningList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.size(), 0u);
  EXPECT_TRUE(list.begin() == list.end());
  EXPECT_TRUE(list.rbegin() == list.rend());
  EXPECT_FALSE(list.Erase(1));
}

TEST_F(RunningListTest, SkipsTombstonesAtBothEndsAndInside) {
  RunningList list;
  for (uint64_t seq = 1; seq <= 6; ++seq) list.Append(RunningEntry{seq, NewJob()});
  EXPECT_TRUE(list.Erase(1));  // leading
  EXPECT_TRUE(list.Erase(6));  // trailing
  EXPECT_TRUE(list.Erase(3));  // inside
  EXPECT_EQ(list.held(), 6u);  // three dead of six: not yet more than the live ones
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(Forward(list), (std::vector<uint64_t>{2, 4, 5}));
  EXPECT_EQ(Backward(list), (std::vector<uint64_t>{5, 4, 2}));
  EXPECT_FALSE(list.Erase(3));  // a tombstone is not erased twice
  EXPECT_FALSE(list.Erase(7));  // never appended
  EXPECT_EQ(list.size(), 3u);
  // Decrement from end() lands on the last live entry, past the trailing tombstone.
  auto last = list.end();
  --last;
  EXPECT_EQ(last->start_seq, 5u);
}

TEST_F(RunningListTest, CompactsWhenTheDeadOutnumberTheLiveAndKeepsTheOrder) {
  RunningList list;
  for (uint64_t seq = 10; seq < 20; ++seq) list.Append(RunningEntry{seq, NewJob()});
  for (uint64_t seq : {11, 13, 15, 17, 19}) EXPECT_TRUE(list.Erase(seq));
  EXPECT_EQ(list.held(), 10u);  // five dead, five live
  EXPECT_TRUE(list.Erase(10));
  EXPECT_EQ(list.held(), 4u);  // six dead of ten: compacted
  EXPECT_EQ(Forward(list), (std::vector<uint64_t>{12, 14, 16, 18}));
  list.Append(RunningEntry{25, NewJob()});
  EXPECT_EQ(Forward(list), (std::vector<uint64_t>{12, 14, 16, 18, 25}));
  EXPECT_EQ(Backward(list), (std::vector<uint64_t>{25, 18, 16, 14, 12}));
  for (uint64_t seq : {12, 14, 16, 18, 25}) EXPECT_TRUE(list.Erase(seq));
  EXPECT_TRUE(list.empty());
  EXPECT_TRUE(list.begin() == list.end());
  EXPECT_TRUE(list.rbegin() == list.rend());
}

// Random starts and ends, as a replay makes them: the same entries, in the same order either
// way, as a std::set keyed by start sequence.
TEST_F(RunningListTest, MatchesAnOrderedSetUnderRandomStartsAndEnds) {
  std::mt19937_64 rng(7);
  RunningList list;
  std::set<RunningEntry> model;
  uint64_t next_seq = 1;
  for (int step = 0; step < 20000; ++step) {
    const bool start = model.empty() || std::uniform_int_distribution<int>(0, 99)(rng) < 52;
    if (start) {
      const RunningEntry entry{next_seq, NewJob()};
      next_seq += std::uniform_int_distribution<uint64_t>(1, 3)(rng);
      list.Append(entry);
      model.insert(entry);
    } else {
      auto victim = model.begin();
      std::advance(victim, std::uniform_int_distribution<size_t>(0, model.size() - 1)(rng));
      EXPECT_TRUE(list.Erase(victim->start_seq));
      model.erase(victim);
    }
    ASSERT_EQ(list.size(), model.size());
    ASSERT_LE(list.held(), 2 * list.size() + 1);
    if (step % 97 == 0) {
      std::vector<RunningEntry> want(model.begin(), model.end());
      std::vector<RunningEntry> got(list.begin(), list.end());
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].start_seq, want[i].start_seq);
        ASSERT_EQ(got[i].job, want[i].job);
      }
      std::vector<RunningEntry> got_back(list.rbegin(), list.rend());
      ASSERT_TRUE(std::equal(got_back.begin(), got_back.end(), model.rbegin(), model.rend(),
                             [](const RunningEntry& a, const RunningEntry& b) {
                               return a.start_seq == b.start_seq && a.job == b.job;
                             }));
    }
  }
}

}  // namespace
}  // namespace sluice::core
