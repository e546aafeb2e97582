// Job steps' record (R-LAUNCH-2, wire/step_record.h): round trips, and strict decoding whose
// errors name the element and member.
#include "wire/step_record.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "wire/step_fixtures.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

using fixtures::ThreeSteps;

TEST(StepRecordTest, StepsRoundTripThroughTheirText) {
  const std::vector<StepRecord> steps = ThreeSteps();
  const std::string text = EncodeSteps(steps).dump();
  Result<std::vector<StepRecord>> back = DecodeSteps(text);
  ASSERT_TRUE(back) << back.error().ToString() << "\n" << text;
  EXPECT_EQ(*back, steps);
}

TEST(StepRecordTest, EveryMemberIsWrittenWithNullsForWhatIsNotKnown) {
  const json running = EncodeSteps(ThreeSteps())[2];
  EXPECT_EQ(running, json::parse(R"({"step": 3, "host": "h1", "command": "./run",
      "start_time": 1733380010, "end_time": 0, "exit_code": null, "signal": null,
      "cpu_seconds": null, "max_rss_mb": null, "state": "RUNNING"})"));
  // JSON has no inf or nan: a measurement that is not a number is written as not measured.
  StepRecord odd = ThreeSteps()[0];
  odd.cpu_seconds = std::numeric_limits<double>::infinity();
  odd.max_rss_mb = std::numeric_limits<double>::quiet_NaN();
  Result<std::vector<StepRecord>> back = DecodeSteps(EncodeSteps({odd}).dump());
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_FALSE((*back)[0].cpu_seconds.has_value());
  EXPECT_FALSE((*back)[0].max_rss_mb.has_value());
}

TEST(StepRecordTest, NoTextIsNoSteps) {
  Result<std::vector<StepRecord>> none = DecodeSteps("");
  ASSERT_TRUE(none) << none.error().ToString();
  EXPECT_TRUE(none->empty());
  Result<std::vector<StepRecord>> empty = DecodeSteps("[]");
  ASSERT_TRUE(empty) << empty.error().ToString();
  EXPECT_TRUE(empty->empty());
}

TEST(StepRecordTest, MembersItDoesNotKnowAreIgnored) {
  json steps = EncodeSteps(ThreeSteps());
  steps[0]["gpu_seconds"] = 4;  // as a newer server might write
  Result<std::vector<StepRecord>> back = DecodeSteps(steps.dump());
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, ThreeSteps());
}

// Each bad record is refused with the element and member named.
TEST(StepRecordTest, DecodingIsStrictAndNamesTheElementAndMember) {
  const json good = EncodeSteps(ThreeSteps());
  const auto with = [&good](size_t index, const char* member, const json& value) {
    json steps = good;
    steps[index][member] = value;
    return steps.dump();
  };
  const auto without = [&good](size_t index, const char* member) {
    json steps = good;
    steps[index].erase(member);
    return steps.dump();
  };
  struct Case {
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"[{", "steps: not JSON"},
      {R"({"step": 1})", "steps: expected an array"},
      {"[1]", "steps[0]: expected an object"},
      {without(1, "host"), "steps[1].host: missing"},
      {without(0, "signal"), "steps[0].signal: missing"},
      {with(0, "step", "1"), "steps[0].step: expected an integer"},
      {with(0, "step", 0), "steps[0].step: expected 1 or more"},
      {with(1, "step", 1), "steps[1].step: 1 repeats an earlier step's"},
      {with(0, "step", int64_t{1} << 40), "steps[0].step: out of range"},
      {with(0, "start_time", 1.5), "steps[0].start_time: expected an integer"},
      {with(0, "end_time", -1), "steps[0].end_time: expected 0 or more"},
      {with(1, "exit_code", "0"), "steps[1].exit_code: expected an integer or null"},
      {with(1, "signal", 0), "steps[1].signal: expected 1 or more, or null"},
      {with(0, "cpu_seconds", "fast"), "steps[0].cpu_seconds: expected a number or null"},
      {with(0, "max_rss_mb", json::array()), "steps[0].max_rss_mb: expected a number or null"},
      {with(0, "command", json::array({"a"})), "steps[0].command: expected a string"},
      {with(0, "state", "DONE"), "steps[0].state: 'DONE' is not RUNNING"},
      {with(2, "end_time", 1733380011), "steps[2].end_time: set while RUNNING"},
      {with(2, "exit_code", 0), "steps[2].exit_code: set while RUNNING"},
  };
  for (const Case& c : cases) {
    Result<std::vector<StepRecord>> steps = DecodeSteps(c.text);
    ASSERT_FALSE(steps) << c.text;
    EXPECT_EQ(steps.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(steps.error().message().rfind(c.error, 0), 0u)
        << "got: " << steps.error().message() << "\nwant: " << c.error;
  }
}

TEST(StepRecordTest, EveryStateIsKnown) {
  for (const char* state : {"RUNNING", "COMPLETED", "FAILED", "CANCELLED"}) {
    EXPECT_TRUE(IsStepState(state)) << state;
  }
  EXPECT_FALSE(IsStepState("DONE"));
  EXPECT_FALSE(IsStepState(""));
}

}  // namespace
}  // namespace sluice::wire
