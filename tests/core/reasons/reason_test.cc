#include "core/reasons/reason.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/explain/render.h"

namespace sluice::core {
namespace {

TEST(ReasonTest, EveryCodeHasADistinctNameHeadlineAndSeverity) {
  std::set<std::string> names;
  std::set<int> severities;
  for (ReasonCode code : kAllReasonCodes) {
    const std::string name(ToString(code));
    EXPECT_NE(name, "UNKNOWN") << static_cast<int>(code);
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_FALSE(Headline(code).starts_with("Unknown")) << name;
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
      {"slots",
       {.code = ReasonCode::kNoResource,
        .resource = "slots",
        .needed = 64,
        .available = 12,
        .hosts = 240},
       "Not enough job slots: needs 64, 12 free on 240 hosts"},
      {"one host",
       {.code = ReasonCode::kNoResource,
        .resource = "slots",
        .needed = 2,
        .available = 1,
        .hosts = 1},
       "Not enough job slots: needs 2, 1 free on 1 host"},
      {"behind head",
       {.code = ReasonCode::kPriorityWait, .job = 1041},
       "Waiting behind job 1041 (queue head)"},
      {"reserved",
       {.code = ReasonCode::kReserved, .job = 7, .time = 500},
       "Free slots are reserved for job 7 (queue head), which is expected to start at t=500"},
      {"reserved unknown",
       {.code = ReasonCode::kReserved, .job = 7, .time = kInfinite},
       "Free slots are reserved for job 7 (queue head), which is expected to start at an unknown "
       "time"},
      {"held", {.code = ReasonCode::kHeld}, "The job is held; release it to let it run"},
      {"begin time",
       {.code = ReasonCode::kBeginTime, .time = 3600},
       "The job's begin time has not come yet: it may start at t=3600"},
      {"queue inactive",
       {.code = ReasonCode::kQueueInactive},
       "The queue is inactive and dispatches no job"},
      {"queue run limit",
       {.code = ReasonCode::kQueueRunLimit, .resource = "jobs", .needed = 2, .available = 2},
       "The queue's run limit is reached: 2 of 2 jobs in use"},
      {"gated",
       {.code = ReasonCode::kGated, .job = 1041, .time = 600},
       "Waiting behind job 1041 (queue head, gate active since t=600)"},
      {"gated hosts",
       {.code = ReasonCode::kGated, .hosts = 3, .job = 9, .time = 5},
       "Waiting behind job 9 (queue head, gate active since t=5): 3 hosts held for it"},
      {"no match",
       {.code = ReasonCode::kNoMatch, .hosts = 200},
       "Host does not satisfy the job's select[] requirement: 200 hosts"},
      {"shared",
       {.code = ReasonCode::kSharedResource, .resource = "lic", .needed = 2, .available = 1},
       "Not enough shared resource lic: needs 2, 1 free"},
      {"exclusive",
       {.code = ReasonCode::kExclusive, .hosts = 4},
       "Exclusive job needs an idle host; the host runs other jobs: 4 hosts"},
      {"closed",
       {.code = ReasonCode::kHostClosed, .hosts = 1},
       "Host is closed or draining: 1 host"},
      {"unavail", {.code = ReasonCode::kHostUnavail, .hosts = 2}, "Host is unavailable: 2 hosts"},
      {"mem",
       {.code = ReasonCode::kNoResource,
        .resource = "mem",
        .needed = 8000,
        .available = 4000,
        .hosts = 3},
       "Not enough mem: needs 8000, 4000 free on 3 hosts"},
      {"one host",
       {.code = ReasonCode::kNoResource,
        .resource = "slots",
        .needed = 8,
        .available = 4,
        .hosts = 5,
        .one_host = true},
       "Not enough job slots on any one host: needs 8, at most 4 free on one of 5 hosts"},
      {"ptile",
       {.code = ReasonCode::kNoResource,
        .resource = "hosts",
        .needed = 3,
        .available = 1,
        .hosts = 3,
        .per_host = 2},
       "Not enough hosts with room for 2 tasks: needs 3, 1 have room"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(RenderReason(c.detail), c.want);
  }
}

}  // namespace
}  // namespace sluice::core
