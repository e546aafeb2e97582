// Wait percentiles are nearest-rank order statistics (the ceil(p*n)-th smallest wait),
// whatever way they are selected: checked against a full sort on random waits with ties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sim/metrics.h"

namespace sluice::sim {
namespace {

int64_t NearestRank(std::vector<int64_t> sorted, double p) {
  std::sort(sorted.begin(), sorted.end());
  const auto k = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(k, 1, sorted.size()) - 1];
}

TEST(MetricsPercentilesTest, NearestRankOnRandomWaits) {
  std::mt19937 rng(8);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(round);
    const int jobs = std::uniform_int_distribution<int>(1, 300)(rng);
    const int spread = std::uniform_int_distribution<int>(1, 1000)(rng);  // small: many ties
    SimResult result;
    std::vector<int64_t> waits;
    for (int i = 0; i < jobs; ++i) {
      JobRecord record{.id = i + 1, .submit = 100};
      if (std::uniform_int_distribution<int>(0, 9)(rng) > 0) {  // some never start
        const int64_t wait = std::uniform_int_distribution<int>(0, spread)(rng);
        record.start = record.submit + wait;
        record.end = record.start + 10;
        waits.push_back(wait);
      }
      result.records.push_back(record);
    }
    const WaitStats stats = ComputeMetrics(result, 1, 0).all;
    ASSERT_EQ(stats.started, static_cast<int64_t>(waits.size()));
    if (waits.empty()) continue;
    EXPECT_EQ(stats.p50_wait, NearestRank(waits, 0.50));
    EXPECT_EQ(stats.p95_wait, NearestRank(waits, 0.95));
    EXPECT_EQ(stats.p99_wait, NearestRank(waits, 0.99));
    EXPECT_EQ(stats.max_wait, *std::max_element(waits.begin(), waits.end()));
  }
}

}  // namespace
}  // namespace sluice::sim
