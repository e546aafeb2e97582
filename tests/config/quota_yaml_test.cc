// The `quotas:` section of the cluster YAML (issue 19; config/quota_yaml.h).
#include "config/quota_yaml.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::config {
namespace {

TEST(QuotaYamlTest, TheQuotasSectionIsReadAndChecked) {
  AuthConfig auth;
  auto ok = ParseClusterConfig(R"(queues:
  - {name: normal}
quotas:
  max_pending_per_user: 10
  queues:
    normal: {max_pending: 100, max_pending_per_user: 5}
)",
                               "c.yaml", &auth);
  ASSERT_TRUE(ok) << ok.error().ToString();
  EXPECT_EQ(auth.quotas.max_pending_per_user, 10);
  EXPECT_EQ(auth.quotas.queues.at("normal").max_pending, 100);
  EXPECT_EQ(auth.quotas.queues.at("normal").max_pending_per_user, 5);
  EXPECT_EQ(auth.quotas.max_array_elements_per_user, 5'000'000);  // the default (issue 48)
  auto capped = ParseClusterConfig(
      "queues:\n  - {name: normal}\nquotas: {max_array_elements_per_user: 20}\n", "c.yaml", &auth);
  ASSERT_TRUE(capped) << capped.error().ToString();
  EXPECT_EQ(auth.quotas.max_array_elements_per_user, 20);
  EXPECT_TRUE(auth.quotas.empty());  // no job quota: the element cap alone checks arrays
  for (const char* bad :
       {"quotas: {queues: {nope: {max_pending: 1}}}", "quotas: {max_pending_per_user: -1}",
        "quotas: {queues: {normal: {max_running: 1}}}", "quotas: {typo: 1}",
        "quotas: {max_array_elements_per_user: many}"}) {
    SCOPED_TRACE(bad);
    auto parsed =
        ParseClusterConfig(std::string("queues:\n  - {name: normal}\n") + bad, "c.yaml", &auth);
    EXPECT_FALSE(parsed);
  }
}

}  // namespace
}  // namespace sluice::config
