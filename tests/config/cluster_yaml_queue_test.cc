// The queue checks of SPEC §2 in the cluster YAML loader, one test per rule with the exact
// message (the operator reads these; a change to one is a deliberate change of wording):
// capacity ranges and sums, queue_defaults, default_queue, resources named by limits and
// default requests, dispatch windows, preemption and fairshare settings.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/cluster_yaml.h"

namespace sluice::config {
namespace {

using core::ClusterConfig;

std::string Yaml(std::string_view text) {
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  return std::string(text);
}

struct Case {
  std::string_view name;
  std::string_view yaml;
  std::string_view message;
};

void ExpectError(const Case& c) {
  SCOPED_TRACE(c.name);
  Result<ClusterConfig> result = ParseClusterConfig(Yaml(c.yaml), "t.yaml");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(result.error().message(), c.message);
}

ClusterConfig MustParse(std::string_view yaml) {
  Result<ClusterConfig> result = ParseClusterConfig(Yaml(yaml), "t.yaml");
  EXPECT_TRUE(result.has_value()) << result.error().message();
  return result.has_value() ? std::move(result).value() : ClusterConfig{};
}

TEST(ClusterYamlQueueTest, PercentagesAreWithinZeroToHundred) {
  const Case cases[] = {
      {"capacity above 100", "queues:\n  - {name: a, capacity: 100.5}\n",
       "t.yaml:2: queues[0].capacity: 100.5 > 100"},
      {"capacity negative", "queues:\n  - {name: a, capacity: -1}\n",
       "t.yaml:2: queues[0].capacity: -1 < 0"},
      {"max_capacity above 100", "queues:\n  - {name: a, max_capacity: 140}\n",
       "t.yaml:2: queues[0].max_capacity: 140 > 100"},
      {"user_limit_pct above 100", "queues:\n  - {name: a, user_limit_pct: 101}\n",
       "t.yaml:2: queues[0].user_limit_pct: 101 > 100"},
      {"user_limit_pct negative", "queues:\n  - {name: a, user_limit_pct: -5}\n",
       "t.yaml:2: queues[0].user_limit_pct: -5 < 0"},
  };
  for (const Case& c : cases) ExpectError(c);
}

TEST(ClusterYamlQueueTest, MaxCapacityIsAtLeastTheGuarantee) {
  ExpectError({"own", "queues:\n  - {name: a, capacity: 60, max_capacity: 50}\n",
               "t.yaml:2: queues[0].max_capacity: 50 < capacity 60"});
  ExpectError({"inherited",
               "queue_defaults: {max_capacity: 50}\nqueues:\n  - {name: a, capacity: 60}\n",
               "t.yaml:1: queues[0].max_capacity: 50 < capacity 60 (from queue_defaults)"});
}

TEST(ClusterYamlQueueTest, GuaranteesSumToAtMostHundredWithAFloatTolerance) {
  ClusterConfig ok = MustParse(
      "queues:\n  - {name: a, capacity: 33.3}\n  - {name: b, capacity: 33.3}\n"
      "  - {name: c, capacity: 33.4}\n");
  EXPECT_EQ(ok.queues.size(), 3u);
  ExpectError({"over", "queues:\n  - {name: a, capacity: 60}\n  - {name: b, capacity: 40.5}\n",
               "t.yaml:3: queues[1].capacity: guaranteed capacities sum to 100.5 > 100"});
}

TEST(ClusterYamlQueueTest, QueueDefaultsSupplyOmittedKeysAndUnsetCapacityIsZero) {
  ClusterConfig config = MustParse(R"(
queue_defaults: {policy: easy_backfill, max_capacity: 80, preempt_grace: 60}
queues:
  - {name: a, capacity: 50}
  - {name: b, max_capacity: 100}
)");
  ASSERT_EQ(config.queues.size(), 2u);
  EXPECT_EQ(config.queues[0].policy, core::PolicyKind::kEasyBackfill);
  EXPECT_EQ(config.queues[0].max_capacity, 80);
  EXPECT_EQ(config.queues[1].max_capacity, 100);  // its own value wins
  EXPECT_EQ(config.queues[1].capacity, 0.0);      // some queue sets one: b is guaranteed 0
  EXPECT_EQ(config.queues[1].preempt_grace, 60);
}

TEST(ClusterYamlQueueTest, DefaultQueueNamesAQueue) {
  EXPECT_EQ(MustParse("default_queue: b\nqueues:\n  - {name: a}\n  - {name: b}\n").default_queue,
            "b");
  ExpectError({"unknown", "default_queue: c\nqueues:\n  - {name: a}\n",
               "t.yaml:1: default_queue: unknown queue 'c'"});
}

TEST(ClusterYamlQueueTest, LimitsAndDefaultRequestsNameOnlyDefinedResources) {
  const Case cases[] = {
      {"limit", R"(
hosts:
  - {name: h1, resources: {mem: 100}}
queues:
  - {name: a}
limits:
  - {name: l, per_user: all, gpu: 2}
)",
       "t.yaml:6: limits[0].gpu: unknown key (not a scope, slots, jobs or a defined resource)"},
      {"default_resreq", R"(
hosts:
  - {name: h1, resources: {mem: 100}}
queues:
  - {name: a, default_resreq: "rusage[gpu=1]"}
)",
       "t.yaml:4: queues[0].default_resreq: rusage: unknown resource 'gpu'; known resources: mem "
       "(fix the name or define the resource in the cluster configuration)"},
      {"default_resreq syntax", "queues:\n  - {name: a, default_resreq: \"select[\"}\n",
       "t.yaml:2: queues[0].default_resreq: column 8: found end of input, expected an expression"},
  };
  for (const Case& c : cases) ExpectError(c);
  ClusterConfig ok = MustParse(R"(
hosts:
  - {name: h1, resources: {mem: 100}}
shared_resources: {lic: 2}
queues:
  - {name: a, default_resreq: "rusage[mem=10:lic=1]"}
)");
  EXPECT_EQ(ok.queues[0].default_resreq, "rusage[mem=10:lic=1]");
}

TEST(ClusterYamlQueueTest, WindowsUseTheCoreSyntax) {
  ClusterConfig config = MustParse(R"(
queues:
  - {name: a, windows: ["19:00-07:00", "Sat 00:00-Mon 00:00"]}
)");
  EXPECT_EQ(config.queues[0].windows.size(), 2u);
  ExpectError({"bad", "queues:\n  - {name: a, windows: [\"19:00-7:00\"]}\n",
               "t.yaml:2: queues[0].windows[0]: '19:00-7:00' is not a window \"hh:mm-hh:mm\" "
               "(00:00 to 23:59) or \"Ddd hh:mm-Ddd hh:mm\" (Ddd: Mon to Sun)"});
  ExpectError(
      {"empty", "queues:\n  - {name: a, windows: [\"Mon 08:00-Mon 08:00\"]}\n",
       "t.yaml:2: queues[0].windows[0]: 'Mon 08:00-Mon 08:00' is empty (start equals end)"});
  ExpectError({"not a string", "queues:\n  - {name: a, windows: [[1]]}\n",
               "t.yaml:2: queues[0].windows[0]: expected a window \"hh:mm-hh:mm\", got a list"});
}

TEST(ClusterYamlQueueTest, PreemptionSettings) {
  ClusterConfig config = MustParse(R"(
queues:
  - {name: high, preemptive: true, preempt_grace: 10}
  - {name: low, preemptable: true}
)");
  EXPECT_TRUE(config.queues[0].preemptive);
  EXPECT_FALSE(config.queues[0].preemptable);
  EXPECT_EQ(config.queues[0].preempt_grace, 10);
  EXPECT_TRUE(config.queues[1].preemptable);
  EXPECT_EQ(config.queues[1].preempt_grace, 30);  // the default
  ExpectError({"bool", "queues:\n  - {name: a, preemptive: maybe}\n",
               "t.yaml:2: queues[0].preemptive: expected true or false, got 'maybe'"});
  ExpectError({"grace", "queues:\n  - {name: a, preempt_grace: -3}\n",
               "t.yaml:2: queues[0].preempt_grace: expected a non-negative integer, got '-3'"});
}

TEST(ClusterYamlQueueTest, FairshareSettings) {
  ClusterConfig config = MustParse(R"(
queues:
  - name: a
    fairshare: {alice: 3, bob: 1.5, default: 1}
    fairshare_half_life: 3600
    fairshare_gpu_weight: 8
  - name: b
)");
  EXPECT_EQ(config.queues[0].fairshare.at("alice"), 3);
  EXPECT_EQ(config.queues[0].fairshare.at("bob"), 1.5);
  EXPECT_EQ(config.queues[0].fairshare.at("default"), 1);
  EXPECT_EQ(config.queues[0].fairshare_half_life, 3600);
  EXPECT_TRUE(config.queues[1].fairshare.empty());
  EXPECT_EQ(config.queues[1].fairshare_half_life, 86400);
  EXPECT_EQ(config.queues[0].fairshare_gpu_weight, 8);
  EXPECT_EQ(config.queues[1].fairshare_gpu_weight, 1);
  const Case cases[] = {
      {"zero shares", "queues:\n  - {name: a, fairshare: {alice: 0}}\n",
       "t.yaml:2: queues[0].fairshare.alice: 0 <= 0 (shares must be positive)"},
      {"words", "queues:\n  - {name: a, fairshare: {alice: lots}}\n",
       "t.yaml:2: queues[0].fairshare.alice: expected a number of shares, got 'lots'"},
      {"not a map", "queues:\n  - {name: a, fairshare: [alice]}\n",
       "t.yaml:2: queues[0].fairshare: expected a map of user: shares, got a list"},
      {"half-life zero", "queues:\n  - {name: a, fairshare_half_life: 0}\n",
       "t.yaml:2: queues[0].fairshare_half_life: 0 < 1"},
      {"negative gpu weight", "queues:\n  - {name: a, fairshare_gpu_weight: -1}\n",
       "t.yaml:2: queues[0].fairshare_gpu_weight: expected a number >= 0 (slot-seconds per "
       "GPU-second), got '-1'"},
  };
  for (const Case& c : cases) ExpectError(c);
}

}  // namespace
}  // namespace sluice::config
