// The daemons' log format (cli/log_flags.h): journald's priority prefix for every level.
#include "cli/log_flags.h"

#include <gtest/gtest.h>

namespace sluice::cli {
namespace {

TEST(LogFlagsTest, EveryLevelHasTheJournalPriorityOfItsSeverity) {
  struct Case {
    spdlog::level::level_enum level;
    std::string_view prefix;
  };
  const Case cases[] = {
      {spdlog::level::trace, "<7>"}, {spdlog::level::debug, "<7>"},
      {spdlog::level::info, "<6>"},  {spdlog::level::warn, "<4>"},
      {spdlog::level::err, "<3>"},   {spdlog::level::critical, "<2>"},
  };
  ASSERT_EQ(std::size(cases), static_cast<size_t>(spdlog::level::off));
  for (const Case& c : cases) {
    SCOPED_TRACE(spdlog::level::to_string_view(c.level).data());
    EXPECT_EQ(JournalPrefix(c.level), c.prefix);
  }
}

}  // namespace
}  // namespace sluice::cli
