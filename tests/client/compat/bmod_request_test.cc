// bmod's options (R-COMPAT-1; client/compat/bmod_request.h): LSF's words become `sluice
// modify`'s flags, the "n" forms remove a value, what Sluice cannot change is refused.
#include "client/compat/bmod_request.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::client::compat {
namespace {

Result<BmodCommandLine> Parse(std::vector<std::string> args) { return ParseBmodArgs(args); }

TEST(BmodRequestTest, LsfOptionsBecomeTheFlagsOfModify) {
  Result<BmodCommandLine> line = Parse({"-q", "short", "-n", "2,4", "-W", "1:30", "-R",
                                        "rusage[mem=100]", "-sp", "7", "-J", "renamed", "12"});
  ASSERT_TRUE(line) << line.error().ToString();
  EXPECT_EQ(line->job, "12");
  EXPECT_EQ(line->flags.queue, "short");
  EXPECT_EQ(line->flags.tasks, "2,4");
  EXPECT_EQ(line->flags.run_limit, "1:30");
  EXPECT_EQ(line->flags.resreq, "rusage[mem=100]");
  EXPECT_EQ(line->flags.priority, 7);
  EXPECT_EQ(line->flags.name, "renamed");
  EXPECT_FALSE(line->flags.begin);
  EXPECT_FALSE(line->flags.depend);
  // The body `sluice modify` sends for them.
  Result<nlohmann::json> body = BuildModifyBody(line->flags, 0);
  ASSERT_TRUE(body) << body.error().ToString();
  EXPECT_EQ((*body)["queue"], "short");
  EXPECT_EQ((*body)["priority"], 7);
}

TEST(BmodRequestTest, TheNFormsRemoveAValue) {
  Result<BmodCommandLine> line = Parse({"-Wn", "-wn", "-bn", "-Rn", "-spn", "12[3]"});
  ASSERT_TRUE(line) << line.error().ToString();
  EXPECT_EQ(line->job, "12[3]");
  EXPECT_EQ(line->flags.run_limit, "none");
  EXPECT_EQ(line->flags.depend, "");
  EXPECT_EQ(line->flags.begin, "none");
  EXPECT_EQ(line->flags.resreq, "");
  EXPECT_EQ(line->flags.priority, 0);
}

TEST(BmodRequestTest, WhatSluiceCannotChangeIsRefusedAndBadLinesAreErrors) {
  Result<BmodCommandLine> refused = Parse({"-o", "out.txt", "12"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("-o: not supported by Sluice's bmod"),
            std::string::npos)
      << refused.error().message();
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"-q", "short"},             // no job
           {"-q", "short", "1", "2"},   // two jobs
           {"12"},                      // no change
           {"-sp", "high", "12"},       // not a number
           {"-Q", "12"},                // unknown option
           {"-q"}}) {                   // missing value
    SCOPED_TRACE(bad.empty() ? "" : bad.front());
    Result<BmodCommandLine> line = Parse(bad);
    ASSERT_FALSE(line);
    EXPECT_EQ(line.error().code(), StatusCode::kInvalidArgument) << line.error().ToString();
  }
}

}  // namespace
}  // namespace sluice::client::compat
