// CycleWorkspace::Recycle (cycle_context.h): a cycle built in a recycled decision buffer makes
// the decisions a cycle with a fresh buffer makes, in the same buffer (issue 45: a fresh one
// per explained cycle cost a page fault per 4 KiB of decisions).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;

// Two hosts of two slots and jobs of 1-3 tasks: some start, the rest pend with reasons.
ClusterState Cluster() {
  ClusterState state = ClusterBuilder().Hosts(2, 2).State();
  for (JobId id = 1; id <= 8; ++id) {
    const JobSpec spec = JobBuilder(id).Tasks(static_cast<int32_t>(id % 3) + 1).Limit(100 * id);
    EXPECT_TRUE(Apply(JobSubmitted{spec}, 0, state).ok());
  }
  return state;
}

// The decisions as text: kind, job, and a start's hosts or a pend's main reason.
std::vector<std::string> Describe(const CycleResult& result) {
  std::vector<std::string> lines;
  for (const Decision& decision : result.decisions) {
    std::string line = std::to_string(decision.index());
    if (const auto* start = std::get_if<StartJob>(&decision)) {
      line += " start " + std::to_string(start->job);
      for (const HostGrant& g : start->allocation.hosts) {
        line += " h" + std::to_string(g.host) + ":" + std::to_string(g.slots);
      }
    } else if (const auto* pend = std::get_if<PendJob>(&decision)) {
      line += " pend " + std::to_string(pend->job) + " " +
              std::string(ToString(pend->reasons.main)) + " " +
              std::to_string(pend->reasons.details.size());
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

TEST(RecycleTest, ARecycledBufferGivesTheDecisionsOfAFreshOne) {
  const ClusterState state = Cluster();
  const Scheduler scheduler;
  const CycleOptions explain{.explain = true};
  const CycleResult fresh = scheduler.RunCycle(state, 1, explain);
  ASSERT_FALSE(fresh.decisions.empty());

  CycleWorkspace workspace;
  CycleResult first = scheduler.RunCycle(state, 1, explain, &workspace);
  const Decision* buffer = first.decisions.data();
  workspace.Recycle(std::move(first));
  const CycleResult second = scheduler.RunCycle(state, 1, explain, &workspace);
  EXPECT_EQ(Describe(second), Describe(fresh));
  EXPECT_EQ(second.decisions.data(), buffer);  // built in the recycled buffer
  EXPECT_EQ(second.stats.started, fresh.stats.started);
}

TEST(RecycleTest, ASmallerResultDoesNotReplaceALargerBuffer) {
  const ClusterState state = Cluster();
  const Scheduler scheduler;
  CycleWorkspace workspace;
  CycleResult explained = scheduler.RunCycle(state, 1, CycleOptions{.explain = true}, &workspace);
  const size_t capacity = explained.decisions.capacity();
  workspace.Recycle(std::move(explained));
  CycleResult plain = scheduler.RunCycle(state, 1, CycleOptions{}, &workspace);
  EXPECT_GE(plain.decisions.capacity(), capacity);
  workspace.Recycle(CycleResult{});  // an empty result leaves the kept buffer
  EXPECT_TRUE(workspace.decisions.empty());
  workspace.Recycle(std::move(plain));
  EXPECT_GE(workspace.decisions.capacity(), capacity);
  EXPECT_TRUE(workspace.decisions.empty());
}

}  // namespace
}  // namespace sluice::core
