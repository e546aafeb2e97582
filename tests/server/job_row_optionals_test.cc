// The job row's optional numbers (PackedOptional, issue 45) round-trip through the stored row.
#include <gtest/gtest.h>

#include <optional>

#include "server/job_row.h"

namespace sluice::server {
namespace {

// The stored row gets back exactly what the record was given (JobRow::From, JobRow::Stored).
TEST(JobRowTest, ItsOptionalNumbersRoundTripThroughTheStoredRow) {
  store::StoredJob stored{.id = 5, .spec = "{}", .first_blocked = 120, .cpu_seconds = 0.25};
  const JobRow row = JobRow::From(store::StoredJob(stored));
  EXPECT_EQ(*row.first_blocked, 120);
  EXPECT_FALSE(row.gate_since);
  EXPECT_FALSE(row.max_rss_mb);
  const store::StoredJob back = row.Stored("PENDING", "PENDING");
  EXPECT_EQ(back.first_blocked, std::optional<int64_t>(120));
  EXPECT_EQ(back.gate_since, std::nullopt);
  EXPECT_EQ(back.cpu_seconds, std::optional<double>(0.25));
  EXPECT_EQ(back.max_rss_mb, std::nullopt);
}

}  // namespace
}  // namespace sluice::server
