// Backfill candidate orders (backfill_order.h), on hand-computed cases.
#include "core/admission/backfill_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "testing/builders.h"

namespace sluice::core {
namespace {

std::vector<JobId> Sorted(const std::vector<Job>& jobs, const std::vector<Duration>& predicted,
                          BackfillOrder order, Instant now, std::vector<bool> aged = {}) {
  std::vector<BackfillCandidate> candidates;
  for (size_t i = 0; i < jobs.size(); ++i) {
    candidates.push_back({.job = &jobs[i],
                          .position = i,
                          .predicted = predicted[i],
                          .aged = i < aged.size() && aged[i]});
  }
  SortCandidates(candidates, order, now);
  std::vector<JobId> ids;
  for (const BackfillCandidate& c : candidates) ids.push_back(c.job->spec.id);
  return ids;
}

std::vector<Job> Jobs(const std::vector<Instant>& submits) {
  std::vector<Job> jobs;
  for (size_t i = 0; i < submits.size(); ++i) {
    Job job;
    job.spec = testing::JobBuilder(static_cast<JobId>(i + 1)).Submit(submits[i]);
    jobs.push_back(job);
  }
  return jobs;
}

TEST(BackfillOrderTest, QueueOrderKeepsTheQueuePositions) {
  const std::vector<Job> jobs = Jobs({0, 0, 0});
  EXPECT_EQ(Sorted(jobs, {300, 100, 200}, BackfillOrder::kQueue, 1000),
            (std::vector<JobId>{1, 2, 3}));
}

TEST(BackfillOrderTest, ShortestPredictedFirstTiesInQueueOrder) {
  const std::vector<Job> jobs = Jobs({0, 0, 0, 0});
  EXPECT_EQ(Sorted(jobs, {300, 100, kInfinite, 100}, BackfillOrder::kShortest, 1000),
            (std::vector<JobId>{2, 4, 1, 3}));
}

TEST(BackfillOrderTest, LargestExpansionFactorFirst) {
  // At t=1000: job 1 (600 + 100) / 100 = 7; job 2 (900 + 300) / 300 = 4;
  // job 3 (0 + 10) / 10 = 1; job 4 without a bound: 1, after job 3 by position;
  // job 5 predicted 0 s counts as 1 s: (400 + 1) / 1 = 401.
  const std::vector<Job> jobs = Jobs({400, 100, 1000, 0, 600});
  EXPECT_EQ(Sorted(jobs, {100, 300, 10, kInfinite, 0}, BackfillOrder::kExpansion, 1000),
            (std::vector<JobId>{5, 1, 2, 3, 4}));
}

TEST(BackfillOrderTest, AgedAfterAnAbsoluteWaitOrAMultipleOfTheRunLimit) {
  Job job;
  job.spec = testing::JobBuilder(1).Limit(600);
  Job unlimited;
  unlimited.spec = testing::JobBuilder(2);
  EXPECT_FALSE(IsAged(job, 1'000'000, PredictiveKnobs{}));  // both rules off
  const PredictiveKnobs absolute{.age_after = 3600};
  EXPECT_FALSE(IsAged(job, 3599, absolute));
  EXPECT_TRUE(IsAged(job, 3600, absolute));
  EXPECT_TRUE(IsAged(unlimited, 3600, absolute));
  const PredictiveKnobs relative{.age_limits = 3};  // 3 x 600 = 1800 s
  EXPECT_FALSE(IsAged(job, 1799, relative));
  EXPECT_TRUE(IsAged(job, 1800, relative));
  EXPECT_FALSE(IsAged(unlimited, 1'000'000, relative));  // no run limit: never by this rule
  const PredictiveKnobs both{.age_after = 1000, .age_limits = 3};
  EXPECT_TRUE(IsAged(job, 1000, both));  // the absolute rule fires first
  EXPECT_TRUE(IsAged(unlimited, 1000, both));
  Job huge;
  huge.spec = testing::JobBuilder(3).Limit(kInfinite / 2);
  EXPECT_FALSE(IsAged(huge, kInfinite - 1, relative));  // 3 x L would overflow: never
}

TEST(BackfillOrderTest, AgedCandidatesFirstInQueueOrder) {
  // Jobs 2 and 4 are aged: they go first, 2 before 4 although 4 is shorter; then 3 and 1
  // shortest first.
  const std::vector<Job> jobs = Jobs({0, 0, 0, 0});
  EXPECT_EQ(
      Sorted(jobs, {300, 500, 100, 50}, BackfillOrder::kShortest, 1000, {false, true, false, true}),
      (std::vector<JobId>{2, 4, 3, 1}));
  EXPECT_EQ(Sorted(jobs, {300, 500, 100, 50}, BackfillOrder::kExpansion, 1000,
                   {false, true, false, true}),
            (std::vector<JobId>{2, 4, 3, 1}));  // x: 4 -> 21, 3 -> 11, 1 -> 4.33
}

// A long queue with many equal factors, aged candidates among them: the order is the
// definition's, checked against a plain sort of (factor descending, position ascending) in
// doubles.
TEST(BackfillOrderTest, LongQueuesKeepTheExpansionOrder) {
  std::vector<Instant> submits;
  std::vector<Duration> predicted;
  std::vector<bool> aged;
  for (int i = 0; i < 300; ++i) {
    submits.push_back((i * 37) % 11 * 100);                            // repeats: equal factors
    predicted.push_back(i % 13 == 0 ? kInfinite : (i * 53) % 7 * 50);  // 0 s counts as 1 s
    aged.push_back(i % 29 == 5);
  }
  const Instant now = 2000;
  const std::vector<Job> jobs = Jobs(submits);
  std::vector<size_t> expected;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (aged[i]) expected.push_back(i);
  }
  const size_t aged_count = expected.size();
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!aged[i]) expected.push_back(i);
  }
  const auto factor = [&](size_t i) {
    if (predicted[i] == kInfinite) return 1.0;
    const double p = static_cast<double>(std::max<Duration>(predicted[i], 1));
    return (static_cast<double>(now - submits[i]) + p) / p;
  };
  std::sort(expected.begin() + static_cast<std::ptrdiff_t>(aged_count), expected.end(),
            [&](size_t a, size_t b) {
              if (factor(a) != factor(b)) return factor(a) > factor(b);
              return a < b;
            });
  std::vector<JobId> expected_ids;
  for (size_t i : expected) expected_ids.push_back(jobs[i].spec.id);
  EXPECT_EQ(Sorted(jobs, predicted, BackfillOrder::kExpansion, now, aged), expected_ids);
}

}  // namespace
}  // namespace sluice::core
