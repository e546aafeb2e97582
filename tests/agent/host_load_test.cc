// The load an agent reports with its heartbeats (issue 47.9): /proc/loadavg's averages and
// /proc/meminfo's MemAvailable, read from a directory the test writes.
#include "agent/host_load.h"

#include <gtest/gtest.h>

#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

TEST(HostLoadTest, ReadsTheAveragesAndAvailableMemory) {
  sluice::testing::TempDir dir;
  sluice::testing::WriteFile(dir.path() / "loadavg", "2.50 1.75 0.40 3/812 12345\n");
  sluice::testing::WriteFile(dir.path() / "meminfo",
                             "MemTotal:       16384000 kB\nMemFree:         1024000 kB\n"
                             "MemAvailable:    8192000 kB\nBuffers:          102400 kB\n");
  const std::optional<wire::HostLoad> load = ReadHostLoad(dir.path().string());
  ASSERT_TRUE(load);
  EXPECT_DOUBLE_EQ(load->r1m, 2.5);
  EXPECT_DOUBLE_EQ(load->r5m, 1.75);
  EXPECT_DOUBLE_EQ(load->r15m, 0.4);
  EXPECT_EQ(load->mem_available_mb, 8000);
}

TEST(HostLoadTest, WithoutMemAvailableTheMemoryIsUnknown) {
  sluice::testing::TempDir dir;
  sluice::testing::WriteFile(dir.path() / "loadavg", "0.00 0.01 0.05 1/100 7\n");
  sluice::testing::WriteFile(dir.path() / "meminfo", "MemTotal: 1000 kB\n");
  const std::optional<wire::HostLoad> load = ReadHostLoad(dir.path().string());
  ASSERT_TRUE(load);
  EXPECT_EQ(load->mem_available_mb, -1);
}

TEST(HostLoadTest, AnUnreadableOrMalformedLoadavgIsNoLoad) {
  sluice::testing::TempDir dir;
  EXPECT_FALSE(ReadHostLoad(dir.path().string()));  // no file
  sluice::testing::WriteFile(dir.path() / "loadavg", "busy\n");
  EXPECT_FALSE(ReadHostLoad(dir.path().string()));
  sluice::testing::WriteFile(dir.path() / "loadavg", "-1 0 0 1/1 1\n");
  EXPECT_FALSE(ReadHostLoad(dir.path().string()));
}

TEST(HostLoadTest, ThisMachineHasALoad) {
  const std::optional<wire::HostLoad> load = ReadHostLoad();
  ASSERT_TRUE(load);
  EXPECT_GT(load->mem_available_mb, 0);
}

}  // namespace
}  // namespace sluice::agent
