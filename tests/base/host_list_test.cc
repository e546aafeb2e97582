// CompressHostList (base/host_list.h): runs, padding, names without numbers, order.
#include "base/host_list.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(HostListTest, RunsOfNumbersBecomeRanges) {
  EXPECT_EQ(CompressHostList({"h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"}), "h[1-8]");
  EXPECT_EQ(CompressHostList({"n1", "n2", "n3", "n7"}), "n[1-3,7]");
  EXPECT_EQ(CompressHostList({"n1"}), "n1");
  EXPECT_EQ(CompressHostList({}), "");
}

TEST(HostListTest, OrderAndRepeatsDoNotChangeTheText) {
  EXPECT_EQ(CompressHostList({"h3", "h1", "h2", "h2"}), "h[1-3]");
  EXPECT_EQ(CompressHostList({"n2", "m07", "n1", "n3"}), "m07,n[1-3]");
}

TEST(HostListTest, ZeroPaddingIsKeptAndNamesWithoutNumbersStay) {
  EXPECT_EQ(CompressHostList({"h01", "h02", "h03"}), "h[01-03]");
  EXPECT_EQ(CompressHostList({"login", "gpu1", "gpu2"}), "gpu[1-2],login");
  EXPECT_EQ(CompressHostList({"h08", "h9"}), "h[08,9]");  // padded and not: two runs
}

}  // namespace
}  // namespace sluice
