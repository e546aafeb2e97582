// `jobs -p` shows the controller's estimated start under a pending job's reasons (R-UX-8):
// "Expected to start around HH:MM", or why it is unknown.
#include <gtest/gtest.h>

#include <ctime>

#include "client/format.h"

namespace sluice::client {
namespace {

using nlohmann::json;

json Pending(json extra) {
  json job = {{"id", 3},
              {"user", "alice"},
              {"state", "PENDING"},
              {"queue", "normal"},
              {"tasks", 1},
              {"hosts", json::array()},
              {"exit_code", nullptr},
              {"name", ""},
              {"submit_time", 1700000000},
              {"reason", "PRIORITY_WAIT"}};
  job.update(extra);
  return json::array({job});
}

TEST(PendingEstimateTest, AKnownStartIsShownAsALocalTime) {
  const std::time_t soon = std::time(nullptr) + 60;
  std::tm tm{};
  localtime_r(&soon, &tm);
  char hhmm[8];
  std::strftime(hhmm, sizeof hhmm, "%H:%M", &tm);
  const std::string text = FormatPendingJobs(Pending({{"estimated_start", soon}}), 0);
  EXPECT_NE(text.find(" Expected to start around "), std::string::npos) << text;
  EXPECT_NE(text.find(hhmm), std::string::npos) << text;
}

TEST(PendingEstimateTest, AnUnknownStartSaysWhy) {
  const std::string text =
      FormatPendingJobs(Pending({{"estimated_start", nullptr}, {"unknown_because", "it is held"}}), 0);
  EXPECT_NE(text.find(" Start time unknown: it is held\n"), std::string::npos) << text;
  EXPECT_EQ(FormatPendingJobs(Pending(json::object()), 0).find("Start time"), std::string::npos);
}

}  // namespace
}  // namespace sluice::client
