// "What would let it start" (issue 6): one sentence per main reason, with the numbers a user
// acts on.
#include "core/explain/hint.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

PendingReasons Main(ReasonDetail detail) {
  PendingReasons reasons;
  reasons.Add(std::move(detail));
  return reasons;
}

class HintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HostSpec linux1{.name = "l1", .slots = 4, .attributes = {{"type", "linux"}}};
    HostSpec linux2{.name = "l2", .slots = 4, .attributes = {{"type", "linux"}}};
    QueueSpec normal{.name = "normal", .run_limit = 3};
    state_.emplace(ClusterBuilder().Host(linux1).Host(linux2).Queue(normal).State());
    for (JobId id : {1, 2, 3}) SubmitRunning(*state_, JobBuilder(id).Tasks(1).User("alice"), 0);
    SubmitRunning(*state_, JobBuilder(4).Tasks(1).User("bob").Project("p1"), 0);
    Submit(*state_, JobBuilder(7).Tasks(1).User("alice").ResReq("select[type==linux]"));
    Submit(*state_, JobBuilder(8).Tasks(4).User("alice"));
  }
  std::string HintFor(ReasonDetail detail) {
    return Hint(*state_->FindJob(7), *state_, Main(std::move(detail)));
  }
  std::optional<ClusterState> state_;
};

TEST_F(HintTest, EveryCodeHasAHint) {
  for (ReasonCode code : kAllReasonCodes) {
    const std::string hint = HintFor(ReasonDetail{.code = code});
    EXPECT_FALSE(hint.empty()) << ToString(code);
    EXPECT_NE(hint, "unknown") << ToString(code);
  }
}

TEST_F(HintTest, SaysWhatWouldLetItStart) {
  struct Case {
    std::string_view name;
    ReasonDetail detail;
    std::string want;
  };
  const Case cases[] = {
      {"slots on matching hosts",
       {.code = ReasonCode::kNoResource,
        .resource = "slots",
        .needed = 8,
        .available = 2,
        .hosts = 2},
       "needs 6 more slots on hosts with type==linux — starts when running jobs free them"},
      {"one slot",
       {.code = ReasonCode::kNoResource,
        .resource = "slots",
        .needed = 8,
        .available = 7,
        .hosts = 2},
       "needs 1 more slot on hosts with type==linux — starts when running jobs free them"},
      {"memory",
       {.code = ReasonCode::kNoResource,
        .resource = "mem",
        .needed = 8000,
        .available = 5000,
        .hosts = 2},
       "needs 3000 more mem on hosts with type==linux — starts when running jobs free them"},
      {"one host",
       {.code = ReasonCode::kNoResource,
        .resource = "slots",
        .needed = 8,
        .available = 3,
        .hosts = 2,
        .one_host = true},
       "needs one host with 8 free slots on hosts with type==linux (the best has 3)"},
      {"ptile",
       {.code = ReasonCode::kNoResource,
        .resource = "hosts",
        .needed = 4,
        .available = 1,
        .hosts = 2,
        .per_host = 2},
       "needs 3 more hosts with room for 2 tasks on hosts with type==linux"},
      {"undefined resource",
       {.code = ReasonCode::kNoResource, .resource = "fpga", .needed = 8},
       "needs 8 fpga, which no host defines; change the request"},
      {"limit",
       {.code = ReasonCode::kLimit, .limit = "u_slots", .scope = "user alice", .used = 8, .max = 8},
       "limit 'u_slots' 8/8 slots for user alice — starts when one of the 3 running jobs it counts "
       "ends"},
      {"limit one job",
       {.code = ReasonCode::kLimit, .limit = "p", .scope = "project p1", .used = 1, .max = 1},
       "limit 'p' 1/1 slots for project p1 — starts when the running job it counts ends"},
      {"held", {.code = ReasonCode::kHeld}, "released by `sluice release 7`"},
      {"behind head",
       {.code = ReasonCode::kPriorityWait, .job = 1041},
       "waits for job 1041 (queue head) to start first"},
      {"queue run limit",
       {.code = ReasonCode::kQueueRunLimit, .resource = "jobs", .needed = 3, .available = 3},
       "queue 'normal' runs 3/3 jobs — starts when one of its 4 running jobs ends"},
      {"shared",
       {.code = ReasonCode::kSharedResource, .resource = "lic", .needed = 2, .available = 0},
       "needs 2 more of shared resource lic (0 free) — starts when jobs holding it end"},
      {"dependency never",
       {.code = ReasonCode::kDependency, .condition = "done(3)", .never = true},
       "nothing: done(3) can never be satisfied; cancel it (`sluice cancel 7`)"},
      {"window",
       {.code = ReasonCode::kQueueWindow, .time = 3600},
       "queue 'normal' opening its dispatch window at t=3600"},
      {"exclusive",
       {.code = ReasonCode::kExclusive, .hosts = 2},
       "an idle host: 2 matching hosts run other jobs — starts when one of them empties"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(HintFor(c.detail), c.want);
  }
}

TEST_F(HintTest, UsesTheFirstDetailOfTheMainCode) {
  PendingReasons reasons;
  reasons.Add(ReasonDetail{.code = ReasonCode::kNoMatch, .hosts = 1});
  reasons.Add(ReasonDetail{.code = ReasonCode::kNoResource,
                           .resource = "slots",
                           .needed = 8,
                           .available = 4,
                           .hosts = 2});
  EXPECT_EQ(Hint(*state_->FindJob(7), *state_, reasons),
            "needs 4 more slots on hosts with type==linux — starts when running jobs free them");
}

TEST_F(HintTest, SaysHowManySlotsMustBeFreedForAWideJob) {
  const PendingReasons limit = Main(
      {.code = ReasonCode::kLimit, .limit = "u_slots", .scope = "user alice", .used = 6, .max = 8});
  EXPECT_EQ(
      Hint(*state_->FindJob(8), *state_, limit),
      "limit 'u_slots' 6/8 slots for user alice — starts when one of the 3 running jobs it counts "
      "ends (2 slots must be freed)");
}

TEST_F(HintTest, CountsRunningJobsInAScope) {
  EXPECT_EQ(RunningJobsInScope(*state_, "user alice"), 3);
  EXPECT_EQ(RunningJobsInScope(*state_, "user bob"), 1);
  EXPECT_EQ(RunningJobsInScope(*state_, "project p1"), 1);
  EXPECT_EQ(RunningJobsInScope(*state_, "queue normal"), 4);
  EXPECT_EQ(RunningJobsInScope(*state_, "host l1"), 4);
  EXPECT_EQ(RunningJobsInScope(*state_, "host l2"), 0);
  EXPECT_EQ(RunningJobsInScope(*state_, "host nowhere"), -1);
  EXPECT_EQ(RunningJobsInScope(*state_, "user alice, queue normal"), 3);
  EXPECT_EQ(RunningJobsInScope(*state_, "user bob, project p1, host l1"), 1);
  EXPECT_EQ(RunningJobsInScope(*state_, "user alice, project p1"), 0);
  EXPECT_EQ(RunningJobsInScope(*state_, "group g"), -1);
  EXPECT_EQ(RunningJobsInScope(*state_, "user alice, group g"), -1);
  EXPECT_EQ(RunningJobsInScope(*state_, ""), -1);
}

}  // namespace
}  // namespace sluice::core
