// The `health_check` key (R-OPS-4): the cluster's default reaches every host, a host's own
// overrides it, `none` turns it off, and each bad value is refused at its line (errors compared
// by code and `file:line: field` prefix, never by their whole text).
#include "config/health_yaml.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

#include "config/cluster_yaml.h"

namespace sluice::config {
namespace {

using core::HealthCheck;

constexpr std::string_view kQueues = "queues:\n  - name: normal\n";

// The `health_check` keys of `text` (with a queue added).
Result<HealthChecks> Parse(const std::string& text) {
  AuthConfig auth;
  Result<core::ClusterConfig> config =
      ParseClusterConfig(text + std::string(kQueues), "cluster.yaml", &auth);
  if (!config) return config.error();
  return auth.health;
}

// The error's location prefix: "cluster.yaml:<line>: <field>".
void ExpectRefusedAt(const std::string& text, std::string_view location) {
  SCOPED_TRACE(text);
  Result<HealthChecks> config = Parse(text);
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(config.error().message().starts_with(location)) << config.error().message();
}

TEST(HealthYamlTest, TheClusterDefaultReachesEveryHostAndAHostMayOverrideOrTurnItOff) {
  Result<HealthChecks> config = Parse(
      "hosts:\n"
      "  - name: h[1-2]\n"
      "  - name: big\n"
      "    health_check: {program: /opt/check, interval: 1h, timeout: 90}\n"
      "  - name: quiet\n"
      "    health_check: none\n"
      "health_check: {program: /usr/sbin/nhc, interval: 5m, timeout: 60s}\n");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  const HealthCheck nhc{.program = "/usr/sbin/nhc", .interval = 300, .timeout = 60};
  EXPECT_EQ(config->all, nhc);
  EXPECT_EQ(config->For("h1"), nhc);
  EXPECT_EQ(config->For("h2"), nhc);
  EXPECT_EQ(config->For("added-by-an-agent"), nhc);
  EXPECT_EQ(config->For("big"),
            (HealthCheck{.program = "/opt/check", .interval = 3600, .timeout = 90}));
  EXPECT_EQ(config->For("quiet"), std::nullopt);
}

TEST(HealthYamlTest, WithoutTheKeyNoHostHasOne) {
  Result<HealthChecks> config = Parse("hosts:\n  - name: h1\n");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->For("h1"), std::nullopt);
}

TEST(HealthYamlTest, DefaultsAreFiveMinutesAndNhcsThirtySecondsShrunkToAShortInterval) {
  Result<HealthChecks> config = Parse(
      "health_check: {program: /usr/sbin/nhc}\n"
      "hosts:\n"
      "  - name: h1\n"
      "    health_check: {program: /bin/true, interval: 10}\n");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->all, (HealthCheck{.program = "/usr/sbin/nhc", .interval = 300, .timeout = 30}));
  EXPECT_EQ(config->For("h1"),
            (HealthCheck{.program = "/bin/true", .interval = 10, .timeout = 10}));
}

TEST(HealthYamlTest, BadValuesAreRefusedAtTheirLine) {
  struct Case {
    std::string_view name;
    std::string text;
    std::string_view location;
  };
  const Case cases[] = {
      {"not a map", "health_check: yes\n", "cluster.yaml:1: health_check"},
      {"relative program", "health_check:\n  program: nhc\n",
       "cluster.yaml:2: health_check.program"},
      {"no program", "health_check:\n  interval: 60\n", "cluster.yaml:2: health_check"},
      {"unknown key", "health_check:\n  program: /a\n  every: 5\n",
       "cluster.yaml:3: health_check.every"},
      {"bad unit", "health_check:\n  program: /a\n  interval: 5d\n",
       "cluster.yaml:3: health_check.interval"},
      {"negative", "health_check:\n  program: /a\n  interval: -5\n",
       "cluster.yaml:3: health_check.interval"},
      {"zero interval", "health_check:\n  program: /a\n  interval: 0\n",
       "cluster.yaml:3: health_check.interval"},
      {"too long", "health_check:\n  program: /a\n  interval: 100000h\n",
       "cluster.yaml:3: health_check.interval"},
      {"timeout over interval", "health_check:\n  program: /a\n  timeout: 2m\n  interval: 60\n",
       "cluster.yaml:3: health_check.timeout"},
      {"per host", "hosts:\n  - name: h1\n    health_check: {program: /a, timeout: 0}\n",
       "cluster.yaml:3: hosts[0].health_check.timeout"},
      {"per host word", "hosts:\n  - name: h1\n    health_check: off\n",
       "cluster.yaml:3: hosts[0].health_check"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExpectRefusedAt(c.text, c.location);
  }
}

}  // namespace
}  // namespace sluice::config
