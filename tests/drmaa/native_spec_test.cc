#include "drmaa/native_spec.h"

#include <gtest/gtest.h>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

constexpr int64_t kNow = 1764450000;

TEST(NativeSpecTest, ReadsSubmitFlagsWithShellQuoting) {
  Expected<client::SubmitFlags> flags =
      ReadNativeSpecification(R"(-n 4 -q short -R "span[hosts=1]" -W 30m -o 'my out' -x)", kNow);
  ASSERT_TRUE(flags) << flags.error().diagnosis();
  EXPECT_EQ(flags->tasks, "4");
  EXPECT_EQ(flags->queue, "short");
  EXPECT_EQ(flags->resreq, "span[hosts=1]");
  EXPECT_EQ(flags->run_limit, "30m");
  EXPECT_EQ(flags->output, "my out");
  EXPECT_TRUE(flags->exclusive);
}

TEST(NativeSpecTest, EmptyAndBlankAreNoFlags) {
  for (const char* text : {"", "   ", " -n 1"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(ReadNativeSpecification(text, kNow));
  }
}

TEST(NativeSpecTest, RefusesBadFlagsNamingThem) {
  struct Case {
    std::string_view name;
    std::string_view text;
  };
  const Case cases[] = {
      {"bad task count", "-n x"},
      {"unknown flag", "--colour red"},
      {"missing value", "-q"},
      {"unbalanced quote", "-o 'out"},
      {"not a flag", "sleep 10"},
      {"array flag", "--array 1-5"},
      {"array in the name", "-J name[1-5]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Expected<client::SubmitFlags> flags = ReadNativeSpecification(c.text, kNow);
    ASSERT_FALSE(flags);
    EXPECT_EQ(flags.error().code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
    EXPECT_TRUE(flags.error().diagnosis().starts_with(DRMAA_NATIVE_SPECIFICATION))
        << flags.error().diagnosis();
  }
}

}  // namespace
}  // namespace sluice::drmaa
