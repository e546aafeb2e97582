// The `steps` member (R-LAUNCH-2, wire/step_record.h) of job objects (wire/job_json.h) and
// history rows (wire/history_json.h): present when there are steps, read back strictly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wire/history_json.h"
#include "wire/job_json.h"
#include "wire/step_record.h"
#include "wire/step_fixtures.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

using fixtures::ThreeSteps;

json JobObject(const JobListEntry& entry, const JobFields* fields = nullptr) {
  std::string text;
  AppendJobText(entry, text, fields);
  json j = json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

TEST(StepsJsonTest, AJobObjectCarriesItsStepsOnlyWhenItHasSome) {
  JobListEntry entry{.id = 7, .state = "RUNNING"};
  EXPECT_FALSE(JobObject(entry).contains("steps"));
  entry.steps = EncodeSteps(ThreeSteps()).dump();
  EXPECT_EQ(JobObject(entry)["steps"], EncodeSteps(ThreeSteps()));
  const JobFields only_steps{"steps"};
  EXPECT_EQ(JobObject(entry, &only_steps), json({{"steps", EncodeSteps(ThreeSteps())}}));
  const JobFields only_id{"id"};
  EXPECT_EQ(JobObject(entry, &only_id), json({{"id", 7}}));
  // A row whose text does not decode is listed without the member, and the listing is JSON.
  entry.steps = R"([{"step": "one"}])";
  const json broken = JobObject(entry);
  EXPECT_FALSE(broken.contains("steps")) << broken;
  EXPECT_EQ(broken["id"], 7);
  EXPECT_EQ(JobObject(entry, &only_steps), json::object());
}

TEST(StepsJsonTest, HistoryRowsCarryTheirStepsBothWays) {
  HistoryEntry entry{.id = 7, .name = "n", .user = "u", .queue = "q", .state = "DONE",
                     .end_time = 1733380100, .steps = ThreeSteps()};
  const nlohmann::ordered_json row = HistoryEntryJson(entry);
  ASSERT_TRUE(row.contains("steps"));
  EXPECT_EQ(json::parse(row["steps"].dump()), EncodeSteps(ThreeSteps()));
  Result<HistoryEntry> back = ParseHistoryEntry(json::parse(row.dump()));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->steps, ThreeSteps());
  // None: an empty array; an older server's row without the member reads as none.
  entry.steps.clear();
  EXPECT_EQ(HistoryEntryJson(entry)["steps"], nlohmann::ordered_json::array());
  json older = json::parse(HistoryEntryJson(entry).dump());
  older.erase("steps");
  back = ParseHistoryEntry(older);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_TRUE(back->steps.empty());
  // A step the client cannot read is an error naming the row, not a step left out.
  json bad = older;
  bad["steps"] = json::array({{{"step", 1}}});
  back = ParseHistoryEntry(bad);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().message(), "history row 7: steps[0].host: missing");
}

}  // namespace
}  // namespace sluice::wire
