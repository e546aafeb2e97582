// ReportBudget (issue 19, poison jobs): no job's failure can make a heartbeat too large.
#include "agent/report_budget.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace sluice::agent {
namespace {

TEST(ReportBudgetTest, MessagesAreCutToValidUtf8WithinTheLimit) {
  const std::string path(600'000, 'p');
  const std::string cut = BoundedText("open output: /" + path);
  EXPECT_LE(cut.size(), kMaxReportMessageBytes);
  EXPECT_NE(cut.find("bytes cut)"), std::string::npos);
  EXPECT_EQ(BoundedText("short"), "short");
  // A multi-byte character is never split, and invalid bytes become '?'.
  const std::string accents = BoundedText(std::string(100, '\xc3') + "\xa9", 10);
  EXPECT_LE(accents.size(), 10u);
  EXPECT_TRUE(nlohmann::json::accept("\"" + BoundedText("a\xff\xc3\xa9z") + "\""));
  EXPECT_EQ(BoundedText("a\xff\xc3\xa9z"), "a?\xc3\xa9z");
  const std::string euro = BoundedText(std::string(2000, 'x') + std::string(3000, '\xe2'), 4096);
  EXPECT_TRUE(nlohmann::json::accept("\"" + euro + "\""));
}

TEST(ReportBudgetTest, ReportsBeyondTheBudgetWaitForTheNextHeartbeat) {
  std::map<int64_t, wire::ExitReport> exits;
  std::map<int64_t, wire::LaunchFailure> failures;
  for (int64_t job = 1; job <= 5000; ++job) exits[job] = {.job = job, .exit_code = 0};
  for (int64_t job = 10'001; job <= 10'100; ++job) {
    failures[job] = {.job = job, .message = "open output: /" + std::string(600'000, 'p')};
  }
  size_t sent_exits = 0;
  size_t sent_failures = 0;
  for (int beat = 0; beat < 100 && !(exits.empty() && failures.empty()); ++beat) {
    wire::HeartbeatRequest request;
    const size_t left = FillReports(exits, failures, kMaxReportBytes, request);
    const std::string body = wire::EncodeHeartbeat(request).dump();
    EXPECT_LE(body.size(), kMaxReportBytes + 1024) << "beat " << beat;
    EXPECT_EQ(left, exits.size() + failures.size() - request.exited.size() -
                        request.launch_failed.size());
    ASSERT_FALSE(request.exited.empty() && request.launch_failed.empty());
    // The controller acknowledges what it received.
    for (const auto& exit : request.exited) exits.erase(exit.job);
    for (const auto& failure : request.launch_failed) failures.erase(failure.job);
    sent_exits += request.exited.size();
    sent_failures += request.launch_failed.size();
  }
  EXPECT_EQ(sent_exits, 5000u);
  EXPECT_EQ(sent_failures, 100u);
}

}  // namespace
}  // namespace sluice::agent
