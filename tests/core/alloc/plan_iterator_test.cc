// PlanIterator: the plan space of one primary request (R-AL-2, seeds/001 "Composition
// Algorithm"): balanced partitions most consolidated first, largest bucket first; span
// shapes; pruning without scanning hosts; the final packed plan; a stable end.
#include "core/alloc/plan_iterator.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::core {
namespace {

using Plans = std::vector<std::vector<int32_t>>;

// Every plan the iterator yields, in order (bounded, so a runaway iterator fails the test).
Plans AllPlans(PlanShape shape, const std::vector<int32_t>& fits) {
  Plans plans;
  for (PlanIterator it(shape, fits); it.Valid() && plans.size() < 1000; it.Next()) {
    plans.push_back(it.value());
  }
  return plans;
}

struct Case {
  std::string_view name;
  PlanShape shape;
  std::vector<int32_t> fits;  // descending
  Plans want;
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(AllPlans(c.shape, c.fits), c.want);
  }
}

TEST(PlanIteratorTest, BalancedPartitionsMostConsolidatedFirstLargestBucketFirst) {
  RunCases({
      {"one task", {.tasks = 1}, {1, 1}, {{1}}},
      {"3 tasks on roomy hosts: k = 1, 2, 3", {.tasks = 3}, {3, 3, 3}, {{3}, {2, 1}, {1, 1, 1}}},
      {"5 tasks: N mod k buckets of ceil(N/k), the rest floor(N/k)",
       {.tasks = 5},
       {5, 5, 5, 5, 5},
       {{5}, {3, 2}, {2, 2, 1}, {2, 1, 1, 1}, {1, 1, 1, 1, 1}}},
      {"k stops at the number of hosts", {.tasks = 4}, {4, 4}, {{4}, {2, 2}}},
      {"k stops at N", {.tasks = 2}, {2, 2, 2, 2}, {{2}, {1, 1}}},
  });
}

TEST(PlanIteratorTest, SpanShapesTheSinglePlan) {
  RunCases({
      {"hosts=1: one bucket of N", {.tasks = 4, .one_host = true}, {4, 4, 4, 4}, {{4}}},
      {"hosts=1 with no host big enough: no plan", {.tasks = 5, .one_host = true}, {4, 4}, {}},
      {"ptile=3, 7 tasks: 3,3,1 (LSF)", {.tasks = 7, .ptile = 3}, {3, 3, 3}, {{3, 3, 1}}},
      {"ptile divides N: no remainder bucket", {.tasks = 6, .ptile = 2}, {4, 4, 4}, {{2, 2, 2}}},
      {"ptile above N: one bucket of N", {.tasks = 2, .ptile = 3}, {4}, {{2}}},
      {"ptile=1: one task per host", {.tasks = 3, .ptile = 1}, {4, 4, 4}, {{1, 1, 1}}},
      {"ptile needs more hosts than fit: no plan", {.tasks = 7, .ptile = 3}, {4, 4}, {}},
      {"ptile: second host too small for K: no plan", {.tasks = 7, .ptile = 3}, {3, 2, 2}, {}},
      {"ptile: remainder host may be small", {.tasks = 7, .ptile = 3}, {3, 3, 1}, {{3, 3, 1}}},
  });
}

TEST(PlanIteratorTest, PlansThatCannotSucceedAreSkipped) {
  RunCases({
      {"no fits: no plan", {.tasks = 1}, {}, {}},
      {"zero fits: no plan", {.tasks = 1}, {0, 0}, {}},
      {"no tasks: no plan", {.tasks = 0}, {4}, {}},
      {"more hosts needed than fit, and too few slots in total", {.tasks = 4}, {1, 1}, {}},
      // [3,3]: the 2nd largest fit is 1; [2,2,2]: the 3rd is 1; packed needs 6 > 5.
      {"bucket above the i-th largest fit", {.tasks = 6}, {3, 1, 1}, {}},
      // [4] skipped (largest fit 3); [2,2] and [2,1,1] fit; packed [3,1] follows.
      {"k starts at ceil(N / largest fit)", {.tasks = 4}, {3, 2, 1}, {{2, 2}, {2, 1, 1}, {3, 1}}},
      // The seed's example: [3] skipped, [2,1] fits, [1,1,1] needs a third host.
      {"seed: 3 tasks on fits 2 and 1", {.tasks = 3}, {2, 1}, {{2, 1}}},
      {"fits with zeros count as no host", {.tasks = 2}, {1, 0, 0}, {}},
  });
}

TEST(PlanIteratorTest, PackedPlanComesLastWhenNoBalancedPlanFits) {
  RunCases({
      {"8 tasks on fits 4,2,1,1", {.tasks = 8}, {4, 2, 1, 1}, {{4, 2, 1, 1}}},
      {"packed uses only the hosts it needs",
       {.tasks = 5},
       {3, 1, 1, 1},
       {{2, 1, 1, 1}, {3, 1, 1}}},
      {"packed after the balanced plans that fit",
       {.tasks = 7},
       {5, 2, 2, 1},
       {{3, 2, 2}, {2, 2, 2, 1}, {5, 2}}},
  });
}

TEST(PlanIteratorTest, PackedPlanEqualToABalancedPlanIsNotRepeated) {
  RunCases({
      // Packed [2,2] equals balanced k=2.
      {"4 tasks on fits 2,2,2", {.tasks = 4}, {2, 2, 2}, {{2, 2}, {2, 1, 1}}},
      // Packed [3] equals balanced k=1.
      {"3 tasks on fits 3,3", {.tasks = 3}, {3, 3}, {{3}, {2, 1}}},
      // Packed [1,1,1] equals balanced k=3.
      {"3 tasks on one-slot fits", {.tasks = 3}, {1, 1, 1, 1}, {{1, 1, 1}}},
  });
}

TEST(PlanIteratorTest, ThousandTasksOnTenThousandOneSlotFitsStartsAtK1000) {
  const std::vector<int32_t> fits(10000, 1);
  PlanIterator it({.tasks = 1000}, fits);
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.value(), std::vector<int32_t>(1000, 1));
  it.Next();
  EXPECT_FALSE(it.Valid());  // k > 1000 is impossible; packed equals the plan above
}

TEST(PlanIteratorTest, EveryPlanIsAPartitionOfNIntoDescendingBucketsWithinTheFits) {
  for (int32_t tasks = 1; tasks <= 12; ++tasks) {
    for (const std::vector<int32_t>& fits :
         std::vector<std::vector<int32_t>>{{4, 4, 4}, {5, 3, 2, 1}, {2, 2, 2, 2, 2, 2}, {7, 1}}) {
      SCOPED_TRACE("tasks " + std::to_string(tasks) + ", largest fit " +
                   std::to_string(fits.front()));
      Plans plans = AllPlans({.tasks = tasks}, fits);
      for (size_t p = 0; p < plans.size(); ++p) {
        const std::vector<int32_t>& plan = plans[p];
        ASSERT_LE(plan.size(), fits.size()) << "plan " << p << " needs more hosts than fit";
        int32_t sum = 0;
        for (size_t i = 0; i < plan.size(); ++i) {
          sum += plan[i];
          EXPECT_GE(plan[i], 1);
          if (i > 0) {
            EXPECT_GE(plan[i - 1], plan[i]);
          }
          EXPECT_LE(plan[i], fits[i]) << "bucket " << i << " of plan " << p;
        }
        EXPECT_EQ(sum, tasks);
        for (size_t q = 0; q < p; ++q) EXPECT_NE(plans[q], plan) << "plan " << p << " repeated";
      }
      int64_t total = 0;
      for (int32_t f : fits) total += f;
      // Whenever the slots exist, some plan uses them (the packed plan at the latest).
      EXPECT_EQ(!plans.empty(), tasks <= total);
      // Exactly the balanced plans that fit (i-th bucket <= i-th fit), by increasing k, then
      // at most one other (packed) plan.
      Plans balanced;
      for (int32_t k = 1; k <= tasks && k <= static_cast<int32_t>(fits.size()); ++k) {
        std::vector<int32_t> plan(static_cast<size_t>(k), tasks / k);
        for (int32_t i = 0; i < tasks % k; ++i) plan[static_cast<size_t>(i)] += 1;
        bool fit = true;
        for (size_t i = 0; i < plan.size(); ++i) fit = fit && plan[i] <= fits[i];
        if (fit) balanced.push_back(plan);
      }
      ASSERT_GE(plans.size(), balanced.size());
      EXPECT_LE(plans.size(), balanced.size() + 1);
      EXPECT_EQ(Plans(plans.begin(), plans.begin() + static_cast<ptrdiff_t>(balanced.size())),
                balanced);
    }
  }
}

TEST(PlanIteratorTest, ValidAndNextAreStableAfterExhaustion) {
  struct StableCase {
    std::string_view name;
    PlanShape shape;
    std::vector<int32_t> fits;
  };
  const StableCase cases[] = {
      {"balanced and packed", {.tasks = 5}, {3, 1, 1, 1}},
      {"hosts=1", {.tasks = 2, .one_host = true}, {2}},
      {"ptile", {.tasks = 3, .ptile = 2}, {2, 2}},
      {"never valid", {.tasks = 9}, {1}},
  };
  for (const StableCase& c : cases) {
    SCOPED_TRACE(c.name);
    PlanIterator it(c.shape, c.fits);
    while (it.Valid()) it.Next();
    for (int i = 0; i < 3; ++i) {
      it.Next();
      EXPECT_FALSE(it.Valid());
    }
  }
}

}  // namespace
}  // namespace sluice::core
