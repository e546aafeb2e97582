// The jobs of tests/fixtures/state-v1 (its README.md), as the upgrade tests of both stores
// expect them after opening that state with today's binary (R-OPS-5).
// Thread-safety: constants and pure functions.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "testing/build_paths.h"

namespace sluice::store::testing {

inline std::filesystem::path StateV1Dir() {
  return std::filesystem::path(sluice::testing::SourceDir()) / "tests" / "fixtures" / "state-v1";
}

struct FixtureJob {
  JobId id;
  const char* state;
  const char* name;  // the spec's
  const char* user;
  const char* depend;  // the spec's
  std::optional<int32_t> exit_code;
  const char* array_states;
};

// Array elements' ids: the array's id in the low 32 bits (server/job_arrays.h).
inline constexpr JobId kSweep2 = (JobId{2} << 32) | 4;
inline constexpr JobId kSweep3 = (JobId{3} << 32) | 4;
inline constexpr JobId kSweep4 = (JobId{4} << 32) | 4;

inline const std::vector<FixtureJob>& StateV1Jobs() {
  static const std::vector<FixtureJob> jobs = {
      {1, "DONE", "done", "alice", "", 0, ""},
      {2, "EXIT", "fails", "alice", "", 3, ""},
      {3, "DONE", "gpu", "alice", "", 0, ""},
      {4, "DONE", "sweep", "alice", "", std::nullopt, "3D"},
      {5, "HELD", "held", "alice", "", std::nullopt, ""},
      {6, "PENDING", "after-held", "alice", "done(5)", std::nullopt, ""},
      {7, "PENDING", "later", "alice", "", std::nullopt, ""},
      {8, "CANCELLED", "cancelled", "alice", "", std::nullopt, ""},
      {9, "PENDING", "bob-later", "bob", "", std::nullopt, ""},
      {kSweep2, "DONE", "sweep", "alice", "", 0, ""},
      {kSweep3, "DONE", "sweep", "alice", "", 0, ""},
      {kSweep4, "DONE", "sweep", "alice", "", 0, ""},
  };
  return jobs;
}

// Every fixture job is in `rows` (by id, nothing else) with its state, spec, exit code and
// array states; the GPU job's allocation names its device and the cancelled job its cancel.
inline void ExpectStateV1Jobs(const std::vector<StoredJob>& rows) {
  ASSERT_EQ(rows.size(), StateV1Jobs().size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const FixtureJob& want = StateV1Jobs()[i];
    const StoredJob& row = rows[i];
    SCOPED_TRACE("job " + std::to_string(want.id));
    EXPECT_EQ(row.id, want.id);
    EXPECT_EQ(row.state, want.state);
    EXPECT_EQ(row.exit_code, want.exit_code);
    EXPECT_EQ(row.array_states, want.array_states);
    const nlohmann::json spec = nlohmann::json::parse(row.spec, nullptr, false);
    ASSERT_TRUE(spec.is_object()) << row.spec;
    EXPECT_EQ(spec.value("name", ""), want.name);
    EXPECT_EQ(spec.value("user", ""), want.user);
    EXPECT_EQ(spec.value("depend", ""), want.depend);
    EXPECT_EQ(row.phase, row.state == std::string("PENDING") || row.state == std::string("HELD")
                             ? "PENDING"
                             : "ENDED");
  }
  EXPECT_NE(rows[2].allocation.find(R"("gpus":[0])"), std::string::npos) << rows[2].allocation;
  EXPECT_NE(rows[7].events.find(R"("event":"cancel")"), std::string::npos) << rows[7].events;
}

}  // namespace sluice::store::testing
