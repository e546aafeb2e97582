// PendingSet keeps queue order exactly as a std::set of the same keys would, through any
// mix of in-order and out-of-order inserts, erases, tombstone revivals and compactions.
#include "core/model/pending_set.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace sluice::core {
namespace {

std::vector<uint64_t> Seqs(const PendingSet& set) {
  std::vector<uint64_t> seqs;
  for (const PendingEntry& e : set) seqs.push_back(e.seq);
  return seqs;
}

std::vector<uint64_t> Seqs(const std::set<PendingEntry>& set) {
  std::vector<uint64_t> seqs;
  for (const PendingEntry& e : set) seqs.push_back(e.seq);
  return seqs;
}

TEST(PendingSetTest, OrdersByPriorityThenSequence) {
  std::vector<Job> jobs(4);
  PendingSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_TRUE(set.insert({.neg_priority = 0, .seq = 1, .job = &jobs[0]}));
  EXPECT_TRUE(set.insert({.neg_priority = 0, .seq = 2, .job = &jobs[1]}));
  EXPECT_TRUE(set.insert({.neg_priority = -5, .seq = 3, .job = &jobs[2]}));  // out of order
  EXPECT_TRUE(set.insert({.neg_priority = 0, .seq = 4, .job = &jobs[3]}));
  EXPECT_EQ(Seqs(set), (std::vector<uint64_t>{3, 1, 2, 4}));
  EXPECT_EQ(set.size(), 4u);
  EXPECT_FALSE(set.insert({.neg_priority = 0, .seq = 2, .job = &jobs[1]}));  // already there
  EXPECT_FALSE(set.insert({.neg_priority = -5, .seq = 3, .job = &jobs[2]}));
  EXPECT_EQ(set.size(), 4u);
}

TEST(PendingSetTest, EraseAndReviveAtTheSamePlace) {
  std::vector<Job> jobs(3);
  PendingSet set;
  for (uint64_t i = 0; i < 3; ++i) set.insert({.neg_priority = 0, .seq = i + 1, .job = &jobs[i]});
  EXPECT_EQ(set.erase({.neg_priority = 0, .seq = 2}), 1u);
  EXPECT_EQ(set.erase({.neg_priority = 0, .seq = 2}), 0u);
  EXPECT_FALSE(set.contains({.neg_priority = 0, .seq = 2}));
  EXPECT_EQ(Seqs(set), (std::vector<uint64_t>{1, 3}));
  // A requeued job goes back where it was.
  EXPECT_TRUE(set.insert({.neg_priority = 0, .seq = 2, .job = &jobs[1]}));
  EXPECT_TRUE(set.contains({.neg_priority = 0, .seq = 2}));
  EXPECT_EQ(Seqs(set), (std::vector<uint64_t>{1, 2, 3}));
  // The head leaves and comes back.
  EXPECT_EQ(set.erase({.neg_priority = 0, .seq = 1}), 1u);
  EXPECT_EQ(Seqs(set), (std::vector<uint64_t>{2, 3}));
  EXPECT_TRUE(set.insert({.neg_priority = 0, .seq = 1, .job = &jobs[0]}));
  EXPECT_EQ(Seqs(set), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(set.begin()->job, &jobs[0]);
}

// Random operations against std::set: the same walk after every step, through the side
// vector's merges and the tombstones' compactions.
TEST(PendingSetTest, MatchesStdSetUnderRandomOperations) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Job> jobs(1);  // any non-null pointer will do; the order ignores it
    PendingSet set;
    std::set<PendingEntry> reference;
    std::vector<PendingEntry> gone;  // erased keys, some of which come back
    uint64_t next_seq = 1;
    for (int step = 0; step < 6000; ++step) {
      const uint64_t op = rng() % 10;
      if (op < 5 || reference.empty()) {
        // Mostly in order at priority 0; sometimes a higher or lower priority.
        const int32_t neg_priority = rng() % 4 == 0 ? -static_cast<int32_t>(rng() % 3) + 1 : 0;
        PendingEntry entry{.neg_priority = neg_priority, .seq = next_seq++, .job = &jobs[0]};
        ASSERT_EQ(set.insert(entry), reference.insert(entry).second);
      } else if (op < 8) {
        // Erase: often the head (a start), else anywhere.
        auto it = reference.begin();
        if (rng() % 2 == 0) std::advance(it, static_cast<std::ptrdiff_t>(rng() % reference.size()));
        const PendingEntry key{.neg_priority = it->neg_priority, .seq = it->seq};
        gone.push_back(*it);
        ASSERT_EQ(set.erase(key), 1u);
        reference.erase(it);
        ASSERT_EQ(set.erase(key), 0u);
      } else if (!gone.empty()) {
        // A requeue: an erased key comes back.
        const size_t i = rng() % gone.size();
        ASSERT_EQ(set.insert(gone[i]), reference.insert(gone[i]).second);
        gone.erase(gone.begin() + static_cast<std::ptrdiff_t>(i));
      }
      ASSERT_EQ(set.size(), reference.size());
      ASSERT_EQ(set.empty(), reference.empty());
      if (step % 97 == 0 || set.size() < 50) {
        ASSERT_EQ(Seqs(set), Seqs(reference)) << "step " << step;
      }
    }
    EXPECT_EQ(Seqs(set), Seqs(reference));
    for (const PendingEntry& e : reference) EXPECT_TRUE(set.contains(e));
  }
}

}  // namespace
}  // namespace sluice::core
