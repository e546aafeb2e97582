// The `reservations:` section (issue 42): whether users may make reservations of their own and
// within what; absent, only administrators may. Every bad value is refused at its line.
#include "config/reservation_policy_yaml.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/cluster_yaml.h"

namespace sluice::config::yaml {
namespace {

Result<UserReservationPolicy> Read(std::string_view text) {
  const Reader reader("f.yaml");
  UserReservationPolicy policy;
  SLUICE_RETURN_IF_ERROR(ReadReservationPolicy(
      reader, Field{YAML::Load(std::string(text)), "reservations", 1}, policy));
  return policy;
}

TEST(ReservationPolicyYamlTest, AbsentOrEmptyLetsNoUserReserve) {
  EXPECT_FALSE(Read("~").value().enabled);
  EXPECT_FALSE(Read("{}").value().enabled);
}

TEST(ReservationPolicyYamlTest, ReadsEveryKey) {
  Result<UserReservationPolicy> policy = Read(
      "user_reservations:\n"
      "  max_hosts: 2\n"
      "  max_duration: 4h\n"
      "  users: [alice, bob]\n"
      "  groups: [staff]\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_TRUE(policy->enabled);
  EXPECT_EQ(policy->max_hosts, 2);
  EXPECT_EQ(policy->max_duration, 4 * 3600);
  EXPECT_EQ(policy->users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(policy->groups, (std::vector<std::string>{"staff"}));
}

TEST(ReservationPolicyYamlTest, AnEmptyUserSectionLetsEveryUserReserveWithoutCaps) {
  Result<UserReservationPolicy> policy = Read("user_reservations: {}\n");
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_TRUE(policy->enabled);
  EXPECT_FALSE(policy->max_hosts);
  EXPECT_FALSE(policy->max_duration);
}

TEST(ReservationPolicyYamlTest, RefusesWhatItCannotUseAtItsPlace) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::string_view message;
  };
  const Case cases[] = {
      {"unknown section key", "users: [a]\n", "f.yaml:1: reservations.users: unknown key"},
      {"unknown policy key", "user_reservations:\n  max_slots: 3\n",
       "f.yaml:2: reservations.user_reservations.max_slots: unknown key"},
      {"not a map", "user_reservations: yes\n", "expected a map"},
      {"zero hosts", "user_reservations:\n  max_hosts: 0\n",
       "f.yaml:2: reservations.user_reservations.max_hosts: 0 < 1"},
      {"bad duration", "user_reservations:\n  max_duration: 4 hours\n",
       "f.yaml:2: reservations.user_reservations.max_duration: expected"},
      {"duplicate user", "user_reservations:\n  users: [a, a]\n", "duplicate name"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<UserReservationPolicy> policy = Read(c.text);
    ASSERT_FALSE(policy.has_value());
    EXPECT_NE(policy.error().message().find(c.message), std::string::npos)
        << policy.error().message();
  }
}

TEST(ReservationPolicyYamlTest, TheClusterYamlReadsTheSectionIntoItsAuthSettings) {
  AuthConfig auth;
  Result<core::ClusterConfig> config = ParseClusterConfig(
      "queues: [{name: normal}]\n"
      "reservations:\n"
      "  user_reservations: {max_hosts: 1}\n",
      "c.yaml", &auth);
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_TRUE(auth.user_reservations.enabled);
  EXPECT_EQ(auth.user_reservations.max_hosts, 1);
  const Result<core::ClusterConfig> bad = ParseClusterConfig(
      "queues: [{name: normal}]\nreservations:\n  user_reservations: {max_hosts: x}\n", "c.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("c.yaml:3: reservations.user_reservations.max_hosts"),
            std::string::npos)
      << bad.error().message();
}

}  // namespace
}  // namespace sluice::config::yaml
