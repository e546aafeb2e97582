// RenderPendingJob (`jobs -p`): reasons most severe first, then the hint, the estimated start
// and, on request, the per-host detail.
#include "core/explain/render.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

TEST(RenderPendingJobTest, ReasonsHintEstimateAndHosts) {
  ClusterState state = ClusterBuilder().Hosts(2, 2).State();
  SubmitRunning(state, JobBuilder(1).Tasks(3), 0);
  Submit(state, JobBuilder(2).Tasks(4).User("alice").Submit(5));
  PendingReasons reasons;
  reasons.Add(ReasonDetail{.code = ReasonCode::kPriorityWait, .job = 9});
  reasons.Add(ReasonDetail{.code = ReasonCode::kNoResource,
                           .resource = "slots",
                           .needed = 4,
                           .available = 1,
                           .hosts = 2});
  const Job& job = *state.FindJob(2);
  EXPECT_EQ(
      RenderPendingJob(job, state, reasons, {.hint = false, .estimate = {}, .per_host = false}),
      "Job 2: user alice, queue normal, 4 tasks, submitted at t=5\n"
      " Not enough job slots: needs 4, 1 free on 2 hosts\n"
      " Waiting behind job 9 (queue head)\n");
  EXPECT_EQ(
      RenderPendingJob(job, state, reasons, {.hint = true, .estimate = "t=100", .per_host = true}),
      "Job 2: user alice, queue normal, 4 tasks, submitted at t=5\n"
      " Not enough job slots: needs 4, 1 free on 2 hosts\n"
      " Waiting behind job 9 (queue head)\n"
      " What would let it start: needs 3 more slots — starts when running jobs free them\n"
      " Estimated start: t=100\n"
      " Per host (as the last cycle left them):\n"
      "  h1: Not enough job slots (0 free)\n"
      "  h2: Has room for 1 task\n");
}

TEST(RenderReasonTest, FairshareAndPreemptingCarryTheirNumbers) {
  EXPECT_EQ(RenderReason({.code = ReasonCode::kFairshare, .job = 12}),
            "Users with a higher fairshare priority go first: waiting behind job 12");
  EXPECT_EQ(RenderReason({.code = ReasonCode::kPreempting, .hosts = 2, .used = 3}),
            "Slots are being freed for the job; waiting for 3 preempted jobs to exit: 2 hosts kept "
            "for it");
}

TEST(RenderReasonTest, ReservationReasonsNameTheReservationItsHostsAndItsWindow) {
  EXPECT_EQ(RenderReason({.code = ReasonCode::kHostReserved,
                          .hosts = 2,
                          .time = 1000,
                          .scope = "reservation maint",
                          .until = 2000,
                          .host_names = "h[1-8]"}),
            "2 hosts are kept by reservation maint on h[1-8] from t=1000 to t=2000, which the job "
            "would run into (it must end by its run limit before then)");
  EXPECT_EQ(RenderReason({.code = ReasonCode::kReservationWait,
                          .time = 1000,
                          .scope = "reservation course",
                          .until = 2000,
                          .host_names = "h1"}),
            "The job's reservation course is closed until its window on h1 from t=1000 to t=2000");
  // A detail without hosts or an end (an older controller's) still reads.
  EXPECT_EQ(
      RenderReason(
          {.code = ReasonCode::kReservationWait, .time = 1000, .scope = "reservation course"}),
      "The job's reservation course is closed until its window from t=1000");
  EXPECT_EQ(RenderReason({.code = ReasonCode::kReservationWait, .scope = "reservation old"}),
            "The job's reservation old has no window left");
  EXPECT_EQ(RenderReason({.code = ReasonCode::kReservationDenied, .scope = "reservation course"}),
            "The job's user may not run jobs in reservation course");
}

TEST(RenderPendingJobTest, EveryCodeRendersWithItsHint) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(2));
  for (ReasonCode code : kAllReasonCodes) {
    PendingReasons reasons;
    reasons.Add(ReasonDetail{.code = code});
    const std::string text = RenderPendingJob(*state.FindJob(2), state, reasons);
    EXPECT_NE(text.find(" What would let it start: "), std::string::npos) << ToString(code);
    EXPECT_EQ(text.find("Unknown"), std::string::npos) << ToString(code);
  }
}

}  // namespace
}  // namespace sluice::core
