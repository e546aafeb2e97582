// ExpandHostRange's limits (src/config/host_range.cc); its patterns are tested in
// cluster_yaml_test.cc (ExpandHostRangeTest).
#include <gtest/gtest.h>

#include <string>

#include "config/cluster_yaml.h"

namespace sluice::config {
namespace {

TEST(HostRangeTest, TheNameLimitIsInclusive) {
  const std::string last = std::to_string(kMaxHostRangeNames);
  Result<std::vector<std::string>> most = ExpandHostRange("n[1-" + last + "]");
  ASSERT_TRUE(most.has_value());
  EXPECT_EQ(most->size(), kMaxHostRangeNames);
  EXPECT_EQ(most->back(), "n" + last);
  const std::string one_more = std::to_string(kMaxHostRangeNames + 1);
  EXPECT_EQ(ExpandHostRange("n[1-" + one_more + "]").error().code(), StatusCode::kInvalidArgument);
}

TEST(HostRangeTest, PrefixAndSuffixUseTheHostNameCharacters) {
  EXPECT_TRUE(ExpandHostRange("a-b.c_d[1-2]x.y").has_value());
  EXPECT_FALSE(ExpandHostRange("a/b[1-2]").has_value());
  EXPECT_FALSE(ExpandHostRange("a[1-2]x/y").has_value());
  EXPECT_EQ(ExpandHostRange("h[0-0]").value(), std::vector<std::string>{"h0"});
  EXPECT_EQ(ExpandHostRange("h[00-01]").value(), (std::vector<std::string>{"h00", "h01"}));
}

}  // namespace
}  // namespace sluice::config
