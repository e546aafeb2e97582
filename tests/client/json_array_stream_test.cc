// The streamed listing's splitter (client/json_array_stream.h, issue 45): whatever the pieces'
// boundaries, each element of the array comes out once, parsed, in order; malformed text is an
// error naming the byte, never a crash; a consumer may stop early.
#include "client/json_array_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::client {
namespace {

using nlohmann::json;

// Feeds `text` in pieces of `size` bytes; the elements seen, or the first error.
Result<std::vector<json>> Split(const std::string& text, size_t size) {
  std::vector<json> seen;
  JsonArraySplitter splitter([&](json element) {
    seen.push_back(std::move(element));
    return true;
  });
  for (size_t at = 0; at < text.size(); at += size) {
    SLUICE_RETURN_IF_ERROR(splitter.Feed(std::string_view(text).substr(at, size)));
  }
  SLUICE_RETURN_IF_ERROR(splitter.Finish());
  return seen;
}

TEST(JsonArraySplitterTest, EveryElementOnceWhateverThePieces) {
  const json jobs = json::array(
      {{{"id", 1}, {"name", "a, [b] {c}"}, {"hosts", json::array({{{"name", "h1"}}})}},
       {{"id", 2}, {"name", "quote \" and \\\\ backslash ]"}, {"reasons", nullptr}},
       json::object(), json::array(), "text", 42, nullptr, true});
  for (const std::string& text : {jobs.dump(), jobs.dump(2), std::string(" \n") + jobs.dump()}) {
    for (size_t size : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, text.size()}) {
      SCOPED_TRACE(std::to_string(size) + ": " + text);
      Result<std::vector<json>> got = Split(text, size);
      ASSERT_TRUE(got) << got.error().ToString();
      EXPECT_EQ(json(*got), jobs);
    }
  }
  Result<std::vector<json>> empty = Split(" [ ] \n", 1);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(JsonArraySplitterTest, MalformedTextIsAnErrorNamingTheByte) {
  struct Case {
    std::string_view name;
    std::string text;
  };
  const Case cases[] = {
      {"not an array", R"({"id": 1})"},
      {"unclosed", R"([{"id": 1},)"},
      {"cut inside an element", R"([{"id": 1)"},
      {"empty element", R"([{"id": 1},,{"id": 2}])"},
      {"trailing comma", R"([{"id": 1},])"},
      {"bad element", R"([{"id": 1}, {"id": }])"},
      {"text after the array", R"([1] 2)"},
      {"nothing", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::vector<json>> got = Split(c.text, 2);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code(), StatusCode::kInternal);
  }
  JsonArraySplitter splitter([](json) { return true; });
  Status bad = splitter.Feed("[1, {\"a\": }]");
  EXPECT_NE(bad.message().find("byte 11"), std::string::npos) << bad.message();
}

TEST(JsonArraySplitterTest, AConsumerThatStopsEndsTheSplitting) {
  int seen = 0;
  JsonArraySplitter splitter([&](json) { return ++seen < 2; });
  EXPECT_TRUE(splitter.Feed("[1, 2, 3, 4").ok());
  EXPECT_EQ(seen, 2);
  EXPECT_TRUE(splitter.stopped());
  EXPECT_TRUE(splitter.Finish().ok());
}

}  // namespace
}  // namespace sluice::client
