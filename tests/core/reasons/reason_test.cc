#include "core/reasons/reason.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/reasons/render.h"

namespace sluice::core {
namespace {

TEST(ReasonTest, EveryCodeHasADistinctNameHeadlineAndSeverity) {
  std::set<std::string> names;
  std::set<int> severities;
  for (ReasonCode code : kAllReasonCodes) {
    const std::string name(ToString(code));
    EXPECT_NE(name, "INTERNAL") << static_cast<int>(code);
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_FALSE(Headline(code).starts_with("Internal")) << name;
    EXPECT_TRUE(severities.insert(Severity(code)).second) << name << " shares a severity";
  }
}

TEST(ReasonTest, MainReasonIsTheMostSevereDetail) {
  PendingReasons reasons;
  reasons.Add(ReasonDetail{.code = ReasonCode::kPriorityWait, .job = 3});
  EXPECT_EQ(reasons.main, ReasonCode::kPriorityWait);
  reasons.Add(ReasonDetail{.code = ReasonCode::kNoResource, .resource = "slots"});
  EXPECT_EQ(reasons.main, ReasonCode::kNoResource);
  reasons.Add(ReasonDetail{.code = ReasonCode::kReserved, .job = 3});
  EXPECT_EQ(reasons.main, ReasonCode::kNoResource);
  EXPECT_EQ(reasons.details.size(), 3u);
}

TEST(ReasonTest, RendersInPlainWords) {
  struct Case {
    std::string_view name;
    ReasonDetail detail;
    std::string want;
  };
  const Case cases[] = {
      {"slots", {.code = ReasonCode::kNoResource, .resource = "slots", .needed = 64, .available = 12, .hosts = 240},
       "Not enough job slots: needs 64, 12 free on 240 hosts"},
      {"one host", {.code = ReasonCode::kNoResource, .resource = "slots", .needed = 2, .available = 1, .hosts = 1},
       "Not enough job slots: needs 2, 1 free on 1 host"},
      {"behind head", {.code = ReasonCode::kPriorityWait, .job = 1041},
       "Waiting behind job 1041 (queue head)"},
      {"reserved", {.code = ReasonCode::kReserved, .job = 7, .time = 500},
       "Free slots are reserved for job 7 (queue head), which is expected to start at t=500"},
      {"reserved unknown", {.code = ReasonCode::kReserved, .job = 7, .time = kInfinite},
       "Free slots are reserved for job 7 (queue head), which is expected to start at an unknown time"},
      {"held", {.code = ReasonCode::kHeld}, "The job is held; release it to let it run"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(RenderReason(c.detail), c.want);
  }
}

}  // namespace
}  // namespace sluice::core
