// predictive_backfill's queue keys in the cluster YAML (issue 20): every knob is read into
// QueueSpec::predictive, unset knobs keep their defaults, and a bad value names its place.
#include <gtest/gtest.h>

#include <string>

#include "config/cluster_yaml.h"

namespace sluice::config {
namespace {

TEST(PredictiveYamlTest, ReadsEveryKnob) {
  const std::string yaml =
      "queues:\n"
      "  - name: a\n"
      "    policy: predictive_backfill\n"
      "    history_runs: 3\n"
      "    backfill_order: expansion\n"
      "    age_after: 600\n"
      "    age_limits: 3\n"
      "    history_match: user_limit\n"
      "    reserve_after: 86400\n"
      "    reserve_depth: 2\n"
      "    reserve_top: 3\n"
      "    predicted_guard: true\n";
  Result<core::ClusterConfig> result = ParseClusterConfig(yaml, "t.yaml");
  ASSERT_TRUE(result.has_value()) << result.error().message();
  const core::QueueSpec& queue = result->queues.at(0);
  EXPECT_EQ(queue.policy, core::PolicyKind::kPredictiveBackfill);
  EXPECT_EQ(queue.predictive,
            (core::PredictiveKnobs{.history_runs = 3,
                                   .history_match = core::HistoryMatch::kUserLimit,
                                   .order = core::BackfillOrder::kExpansion,
                                   .age_after = 600,
                                   .age_limits = 3,
                                   .reserve_after = 86400,
                                   .reserve_depth = 2,
                                   .reserve_top = 3,
                                   .predicted_guard = true}));
}

TEST(PredictiveYamlTest, UnsetKnobsKeepTheirDefaults) {
  Result<core::ClusterConfig> result =
      ParseClusterConfig("queues:\n  - {name: a, policy: predictive_backfill}\n", "t.yaml");
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->queues.at(0).predictive, core::PredictiveKnobs{});
}

TEST(PredictiveYamlTest, PredictedGuardMustBeABoolean) {
  Result<core::ClusterConfig> result =
      ParseClusterConfig("queues:\n  - {name: a, predicted_guard: maybe}\n", "t.yaml");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.error().message().find("t.yaml:2"), std::string::npos)
      << result.error().message();
}

TEST(PredictiveYamlTest, HistoryMatchAndAgeLimitsRejectBadValues) {
  Result<core::ClusterConfig> match =
      ParseClusterConfig("queues:\n  - {name: a, history_match: job}\n", "t.yaml");
  ASSERT_FALSE(match.has_value());
  EXPECT_NE(match.error().message().find("user, user_limit"), std::string::npos)
      << match.error().message();
  Result<core::ClusterConfig> ages =
      ParseClusterConfig("queues:\n  - {name: a, age_limits: -1}\n", "t.yaml");
  ASSERT_FALSE(ages.has_value());
  EXPECT_NE(ages.error().message().find("t.yaml:2"), std::string::npos) << ages.error().message();
}

}  // namespace
}  // namespace sluice::config
