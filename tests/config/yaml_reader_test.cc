// yaml::Reader: typed reads of YAML values, each failure located at its field.
#include "config/yaml_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace sluice::config::yaml {
namespace {

Field FieldOf(std::string_view text, std::string path = "x", int line = 7) {
  return Field{YAML::Load(std::string(text)), std::move(path), line};
}

// The error is kInvalidArgument and located at `path` on `line` of file "f.yaml".
void ExpectLocatedError(const Status& status, std::string_view path, int line) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  const std::string prefix = "f.yaml:" + std::to_string(line) + ": " + std::string(path) + ": ";
  EXPECT_EQ(status.message().substr(0, prefix.size()), prefix) << status.message();
}

TEST(YamlReaderTest, IntegersAreUnquotedAndWithinTheirType) {
  const Reader reader("f.yaml");
  struct Case {
    std::string_view name;
    std::string_view text;
    bool ok;
  };
  const Case cases[] = {
      {"plain", "12", true},           {"quoted", "'12'", false},
      {"negative", "-1", false},       {"too big for int32", "3000000000", false},
      {"a word", "ten", false},        {"out of int64", "99999999999999999999", false},
      {"trailing text", "12x", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<int32_t> value = reader.ReadCount<int32_t>(FieldOf(c.text));
    EXPECT_EQ(value.has_value(), c.ok);
    if (!value) ExpectLocatedError(value.error(), "x", 7);
  }
  EXPECT_EQ(*reader.ReadPriority(FieldOf("-5")), -5);
  EXPECT_FALSE(reader.ReadInt<int64_t>(FieldOf("0"), 1).has_value());
}

TEST(YamlReaderTest, PercentsBoolsAndChoices) {
  const Reader reader("f.yaml");
  EXPECT_DOUBLE_EQ(*reader.ReadPercent(FieldOf("33.3")), 33.3);
  EXPECT_FALSE(reader.ReadPercent(FieldOf("100.5")).has_value());
  EXPECT_FALSE(reader.ReadPercent(FieldOf("-1")).has_value());
  EXPECT_FALSE(reader.ReadPercent(FieldOf("\"50\"")).has_value());
  EXPECT_TRUE(*reader.ReadBool(FieldOf("yes")));
  EXPECT_FALSE(*reader.ReadBool(FieldOf("Off")));
  EXPECT_FALSE(reader.ReadBool(FieldOf("'true'")).has_value());
  EXPECT_EQ(*reader.ReadPolicy(FieldOf("easy_backfill")), core::PolicyKind::kEasyBackfill);
  ExpectLocatedError(reader.ReadPolicy(FieldOf("lifo")).error(), "x", 7);
}

TEST(YamlReaderTest, MapsKeepFileOrderAndRefuseDuplicateKeys) {
  const Reader reader("f.yaml");
  Result<std::vector<Entry>> entries = reader.MapEntries(FieldOf("b: 1\na: 2\n", "top", 1));
  ASSERT_TRUE(entries.has_value());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].key, "b");
  EXPECT_EQ((*entries)[0].value.path, "top.b");
  EXPECT_EQ((*entries)[1].key_line, 2);
  ExpectLocatedError(reader.MapEntries(FieldOf("a: 1\na: 2\n", "top", 1)).error(), "top.a", 2);
  EXPECT_TRUE(reader.MapEntries(FieldOf("~")).value().empty());
  EXPECT_FALSE(reader.MapEntries(FieldOf("[1]")).has_value());
}

TEST(YamlReaderTest, ListsAndNames) {
  const Reader reader("f.yaml");
  Result<std::vector<Field>> items = reader.ListItems(FieldOf("[a, b]", "q"));
  ASSERT_TRUE(items.has_value());
  EXPECT_EQ((*items)[1].path, "q[1]");
  EXPECT_EQ(reader.ReadNameList(FieldOf("[a, b]")).value(), (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(reader.ReadNameList(FieldOf("[a, a]")).has_value());
  EXPECT_FALSE(reader.ReadName(FieldOf("'a b'")).has_value());
  EXPECT_FALSE(reader.ReadName(FieldOf("''")).has_value());
}

TEST(YamlReaderTest, HostExpansionIsChargedToOneBudget) {
  Reader reader("f.yaml");
  EXPECT_EQ(reader.ExpandHosts(FieldOf("h[1-3]")).value().size(), 3u);
  EXPECT_TRUE(reader.Charge(FieldOf("x"), kMaxExpandedHostNames - 3).ok());
  ExpectLocatedError(reader.ExpandHosts(FieldOf("h1", "hosts[0].name", 4)).error(), "hosts[0].name",
                     4);
  ExpectLocatedError(reader.ExpandHosts(FieldOf("h[2-1]", "n", 5)).error(), "n", 5);
}

TEST(YamlReaderTest, MessageHelpers) {
  EXPECT_EQ(ChildPath("", "hosts"), "hosts");
  EXPECT_EQ(ChildPath("queues[0]", "name"), "queues[0].name");
  EXPECT_EQ(Quote("a\nb"), "'a?b'");
  EXPECT_EQ(Clip(std::string(70, 'x')).size(), 63u);
  EXPECT_EQ(FormatNumber(33.3), "33.3");
  EXPECT_TRUE(IsStringTagged(YAML::Load("'5'")));
  EXPECT_FALSE(IsStringTagged(YAML::Load("5")));
  EXPECT_FALSE(SecondDocumentLine("a: 1\n").has_value());
  EXPECT_EQ(SecondDocumentLine("a: 1\n---\nb: 2\n"), 2);
}

}  // namespace
}  // namespace sluice::config::yaml
