// Cluster-wide summary (`-psum`): jobs by main reason, by any reason, and per queue.
#include "core/explain/summary.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;

PendJob Pend(JobId id, std::vector<ReasonDetail> details) {
  PendJob pend{.job = id, .reasons = {}};
  for (ReasonDetail& d : details) pend.reasons.Add(std::move(d));
  return pend;
}

TEST(SummaryTest, CountsByMainReasonAnyReasonAndQueue) {
  ClusterState state = ClusterBuilder()
                           .Hosts(1, 1)
                           .Queue("normal", PolicyKind::kFifo)
                           .Queue("short", PolicyKind::kFifo)
                           .State();
  for (JobId id : {1, 2, 3}) Submit(state, JobBuilder(id));
  Submit(state, JobBuilder(4).Queue("short"));
  const ReasonDetail slots{
      .code = ReasonCode::kNoResource, .resource = "slots", .needed = 2, .hosts = 1};
  const std::vector<PendJob> pending = {
      Pend(1, {ReasonDetail{.code = ReasonCode::kNoMatch, .hosts = 1}, slots}),
      Pend(2, {ReasonDetail{.code = ReasonCode::kPriorityWait, .job = 1}}),
      Pend(3, {ReasonDetail{.code = ReasonCode::kPriorityWait, .job = 1}}),
      Pend(4, {slots}),
  };
  PendingSummary summary = Summarize(pending, state);
  EXPECT_EQ(summary.all.jobs, 4);
  EXPECT_EQ(summary.all.by_main.at(ReasonCode::kNoResource), 2);
  EXPECT_EQ(summary.all.by_main.at(ReasonCode::kPriorityWait), 2);
  EXPECT_EQ(summary.all.by_any.at(ReasonCode::kNoMatch), 1);
  EXPECT_FALSE(summary.all.by_main.contains(ReasonCode::kNoMatch));
  EXPECT_EQ(summary.by_queue.at("normal").jobs, 3);
  EXPECT_EQ(summary.by_queue.at("short").by_main.at(ReasonCode::kNoResource), 1);
  EXPECT_EQ(RenderSummary(summary),
            "Pending jobs by main reason (4 jobs):\n"
            "  2     NO_RESOURCE      Not enough job slots\n"
            "  2     PRIORITY_WAIT    Waiting behind the queue's head job\n"
            "Jobs with each reason among their details:\n"
            "  2     NO_RESOURCE\n"
            "  2     PRIORITY_WAIT\n"
            "  1     NO_MATCH\n"
            "By queue:\n"
            "  normal: 3 jobs: PRIORITY_WAIT 2, NO_RESOURCE 1\n"
            "  short: 1 job: NO_RESOURCE 1\n");
}

TEST(SummaryTest, EmptyAndUnknownJobs) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  EXPECT_EQ(Summarize({}, state).all.jobs, 0);
  PendingSummary summary = Summarize({Pend(99, {ReasonDetail{.code = ReasonCode::kHeld}})}, state);
  EXPECT_EQ(summary.by_queue.at("-").jobs, 1);
}

}  // namespace
}  // namespace sluice::core
