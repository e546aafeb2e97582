// `sluice submit` flags -> POST /v1/jobs body: run limits, begin times, task ranges, the
// command forms and the working directory rule of R-SRV-5b.
#include "client/submit_request.h"

#include <gtest/gtest.h>

namespace sluice::client {
namespace {

using nlohmann::json;

TEST(ParseRunLimitTest, AcceptsBsubAndUnitForms) {
  struct Case {
    std::string_view text;
    int64_t seconds;
  };
  for (const Case& c : std::vector<Case>{{"10", 600},
                                         {"1:30", 5400},
                                         {"0:0:45", 45},
                                         {"90s", 90},
                                         {"10m", 600},
                                         {"2h", 7200},
                                         {"1d", 86400}}) {
    SCOPED_TRACE(c.text);
    Result<int64_t> limit = ParseRunLimit(std::string(c.text));
    ASSERT_TRUE(limit.has_value());
    EXPECT_EQ(*limit, c.seconds);
  }
}

TEST(ParseRunLimitTest, RejectsMalformedOrZeroLimits) {
  for (std::string text : {"", "abc", "1:2:3:4", "-5", "0", "10x", "1:-2"}) {
    SCOPED_TRACE(text);
    Result<int64_t> limit = ParseRunLimit(text);
    ASSERT_FALSE(limit.has_value());
    EXPECT_EQ(limit.error().code(), StatusCode::kInvalidArgument);
  }
}

TEST(ParseBeginTimeTest, RelativeEpochAndLocalForms) {
  const int64_t now = 1'764'450'000;
  EXPECT_EQ(*ParseBeginTime("+90", now), now + 90);
  EXPECT_EQ(*ParseBeginTime("+10m", now), now + 600);
  EXPECT_EQ(*ParseBeginTime("1764460000", now), 1'764'460'000);
  Result<int64_t> clock = ParseBeginTime("12:30", now);
  ASSERT_TRUE(clock.has_value());
  EXPECT_GT(*clock, now);
  EXPECT_LE(*clock, now + 86400);
  Result<int64_t> date = ParseBeginTime("2030-01-02T03:04:05", now);
  ASSERT_TRUE(date.has_value());
  EXPECT_EQ(*ParseBeginTime("2030-01-02T03:04", now), *date - 5);
  for (std::string bad : {"", "+", "25:00", "2030-13-01", "tomorrow", "2030-01-02T3"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseBeginTime(bad, now).has_value());
  }
}

TEST(BuildSubmitBodyTest, MapsEveryFlag) {
  SubmitFlags flags{.queue = "short",
                    .tasks = "2,8",
                    .resreq = "span[hosts=1]",
                    .run_limit = "5",
                    .depend = "done(3)",
                    .begin = "+60",
                    .exclusive = true,
                    .hold = true,
                    .output = "o.%j",
                    .error = "/abs/e.%j",
                    .cwd = "sub",
                    .name = "sim",
                    .project = "p1",
                    .priority = 7,
                    .command = {"sleep 10"}};
  Result<json> body = BuildSubmitBody(flags, "/home/alice", 1000);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ(*body, json::parse(R"J({"command": "sleep 10", "queue": "short", "name": "sim",
      "min_tasks": 2, "max_tasks": 8, "resreq": "span[hosts=1]", "run_limit": 300,
      "begin": 1060, "depend": "done(3)", "exclusive": true, "hold": true, "project": "p1",
      "priority": 7, "cwd": "/home/alice/sub", "output": "/home/alice/sub/o.%j",
      "error": "/abs/e.%j"})J"));
}

TEST(BuildSubmitBodyTest, DefaultsToTheSubmitDirectoryAndArgvForSeveralWords) {
  SubmitFlags flags{.tasks = "4", .command = {"echo", "a b"}};
  Result<json> body = BuildSubmitBody(flags, "/work", 0);
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(*body, json::parse(R"({"command": ["echo", "a b"], "tasks": 4, "cwd": "/work"})"));
}

TEST(BuildSubmitBodyTest, RejectsBadTaskCountsAndMissingCommands) {
  for (std::string tasks : {"0", "4,2", "a", "1,2,3", "-1"}) {
    SCOPED_TRACE(tasks);
    SubmitFlags flags{.tasks = tasks, .command = {"true"}};
    Result<json> body = BuildSubmitBody(flags, "/", 0);
    ASSERT_FALSE(body.has_value());
    EXPECT_EQ(body.error().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(BuildSubmitBody(SubmitFlags{}, "/", 0).has_value());
}

}  // namespace
}  // namespace sluice::client

namespace sluice::client {
namespace {

// --export as sbatch reads it (issue 47.1): ALL (the default) the caller's whole environment,
// NONE nothing, a list the named variables (with values of their own where given).
// `--gpu` is bsub's -gpu: its section goes after -R, and the same refusals hold.
TEST(BuildSubmitBodyTest, GpuAppendsTheGpuSection) {
  SubmitFlags flags;
  flags.command = {"true"};
  flags.resreq = "span[hosts=1]";
  flags.gpu = "num=2:gmodel=Tesla-V100";
  Result<json> body = BuildSubmitBody(flags, "/", 0);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ((*body)["resreq"], "span[hosts=1] gpu[num=2:gmodel=\"Tesla-V100\"]");
  flags.resreq.clear();
  flags.gpu = "-";
  body = BuildSubmitBody(flags, "/", 0);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ((*body)["resreq"], "gpu[num=1]");

  flags.gpu = "mps=yes";
  body = BuildSubmitBody(flags, "/", 0);
  ASSERT_FALSE(body.has_value());
  EXPECT_EQ(body.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(body.error().message().starts_with("--gpu mps=yes: ")) << body.error().message();
  flags.gpu = "num=1";
  flags.resreq = "{select[a]} || {select[b]}";
  body = BuildSubmitBody(flags, "/", 0);
  ASSERT_FALSE(body.has_value());
  EXPECT_EQ(body.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(body.error().message().starts_with("--gpu: ")) << body.error().message();
}

TEST(ExportedEnvironmentTest, AllNoneAndLists) {
  const std::map<std::string, std::string> caller = {{"A", "1"}, {"B", "2"}, {"PATH", "/bin"}};
  EXPECT_EQ(ExportedEnvironment("", caller).value(),
            (nlohmann::json{{"A", "1"}, {"B", "2"}, {"PATH", "/bin"}}));
  EXPECT_EQ(ExportedEnvironment("ALL", caller).value().size(), 3u);
  EXPECT_TRUE(ExportedEnvironment("NONE", caller).value().empty());
  EXPECT_EQ(ExportedEnvironment("A,C=3,MISSING", caller).value(),
            (nlohmann::json{{"A", "1"}, {"C", "3"}}));
  EXPECT_EQ(ExportedEnvironment("ALL,B=9", caller).value(),
            (nlohmann::json{{"A", "1"}, {"B", "9"}, {"PATH", "/bin"}}));
  const Result<nlohmann::json> bad = ExportedEnvironment("A,,B", caller);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("--export A,,B: expected"), std::string::npos);
  EXPECT_FALSE(ExportedEnvironment("=1", caller).has_value());
}

}  // namespace
}  // namespace sluice::client
