#include "drmaa/placeholders.h"

#include <gtest/gtest.h>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

TEST(PlaceholdersTest, ExpandsEachPlaceholderAnywhere) {
  const PlaceholderValues values{.home = "/home/a", .wd = "/w", .index = "%a"};
  EXPECT_EQ(*ExpandPlaceholders("$drmaa_hd_ph$/o.$drmaa_incr_ph$.txt", "x", values),
            "/home/a/o.%a.txt");
  EXPECT_EQ(*ExpandPlaceholders("$drmaa_wd_ph$/$drmaa_wd_ph$", "x", values), "/w//w");
  EXPECT_EQ(*ExpandPlaceholders("plain %j $notone$", "x", values), "plain %j $notone$");
}

TEST(PlaceholdersTest, RefusesPlaceholdersWithoutAValueNamingTheAttribute) {
  const PlaceholderValues single{.home = "/h", .wd = "/w"};
  Expected<std::string> incr = ExpandPlaceholders("o.$drmaa_incr_ph$", "drmaa_output_path", single);
  ASSERT_FALSE(incr);
  EXPECT_EQ(incr.error().code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
  EXPECT_TRUE(incr.error().diagnosis().starts_with("drmaa_output_path")) << incr.error().diagnosis();
  const PlaceholderValues no_wd{.home = "/h"};
  EXPECT_EQ(ExpandPlaceholders("$drmaa_wd_ph$", DRMAA_WD, no_wd).error().code(),
            DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
}

TEST(PlaceholdersTest, ReadsThePathSyntax) {
  EXPECT_EQ(*PathOf(":/tmp/o", "a"), "/tmp/o");
  EXPECT_EQ(*PathOf("/tmp/o", "a"), "/tmp/o");
  EXPECT_EQ(*PathOf("/tmp/a:b", "a"), "/tmp/a:b");
  EXPECT_EQ(*PathOf("rel/o", "a"), "rel/o");
  EXPECT_EQ(PathOf("host:/tmp/o", "a").error().code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
}

}  // namespace
}  // namespace sluice::drmaa
