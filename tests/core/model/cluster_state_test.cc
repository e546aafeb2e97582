#include "core/model/cluster_state.h"

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

TEST(ClusterStateTest, UniformClusterNamesHostsWithPadding) {
  ClusterConfig config = UniformCluster(12, 2);
  ASSERT_EQ(config.hosts.size(), 12u);
  EXPECT_EQ(config.hosts.front().name, "h01");
  EXPECT_EQ(config.hosts.back().name, "h12");
}

}  // namespace
}  // namespace sluice::core
