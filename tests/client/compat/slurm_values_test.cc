// Slurm's values (client/compat/slurm_values.h): --time forms, --dependency translated to
// Sluice's expressions.
#include "client/compat/slurm_values.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice::client::compat {
namespace {

TEST(SlurmTimeTest, EveryForm) {
  struct Case {
    std::string_view text;
    int64_t seconds;
  };
  for (const Case& c : std::vector<Case>{{"10", 600},
                                         {"10:30", 630},
                                         {"1:02:03", 3723},
                                         {"2-0", 172800},
                                         {"1-1:30", 86400 + 5400},
                                         {"0-0:0:5", 5}}) {
    SCOPED_TRACE(c.text);
    Result<int64_t> seconds = ParseSlurmTime(c.text);
    ASSERT_TRUE(seconds.has_value());
    EXPECT_EQ(*seconds, c.seconds);
  }
  for (std::string_view bad : {"", "0", "x", "1:2:3:4", "-5", "1-", "infinite", "1-2-3"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseSlurmTime(bad).has_value());
  }
}

TEST(SlurmDependencyTest, TranslatesTypesSeparatorsAndArrayElements) {
  EXPECT_EQ(*TranslateSlurmDependency("afterok:5"), "done(5)");
  EXPECT_EQ(*TranslateSlurmDependency("after:1?afternotok:2"), "started(1) || exit(2)");
  EXPECT_EQ(*TranslateSlurmDependency("afterany:7_3"), "ended(7[3])");
  for (std::string_view bad :
       {"", "afterok", "afterok:", "afterok:x", "a:1,b:2?c:3", "singleton"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(TranslateSlurmDependency(bad).has_value());
  }
}

TEST(SlurmValuesTest, HostListsCompressIntoRuns) {
  EXPECT_EQ(CompressHostList({"n1", "n2", "n3"}), "n[1-3]");
  EXPECT_EQ(CompressHostList({"n1"}), "n1");
  EXPECT_EQ(CompressHostList({}), "");
}

TEST(SlurmValuesTest, ElapsedAndClockForms) {
  EXPECT_EQ(SlurmElapsed(1), "0:01");
  EXPECT_EQ(SlurmElapsed(3723), "1:02:03");
  EXPECT_EQ(SlurmClock(300), "00:05:00");
  EXPECT_EQ(SlurmClock(86400 + 5), "1-00:00:05");
}

}  // namespace
}  // namespace sluice::client::compat
