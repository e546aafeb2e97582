// Per-host detail (`-p2`): what each host of the job's queue says, in the allocator's order
// of checks, grouped by what they say.
#include "core/explain/host_detail.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

HostSpec Linux(std::string name, int64_t mem, HostState state = HostState::kOk) {
  return HostSpec{.name = std::move(name),
                  .slots = 2,
                  .resources = {{"mem", mem}},
                  .attributes = {{"type", "linux"}},
                  .state = state};
}

TEST(HostDetailTest, EveryHostSaysWhatKeepsTheJobOff) {
  ClusterState state =
      ClusterBuilder()
          .Host(Linux("full", 4000))
          .Host(Linux("closed", 4000, HostState::kClosed))
          .Host(Linux("gone", 4000, HostState::kUnavail))
          .Host(Linux("lowmem", 500))
          .Host(Linux("free", 4000))
          .Host(HostSpec{.name = "gpu", .slots = 8, .attributes = {{"type", "gpu"}}})
          .State();
  SubmitRunning(state, JobBuilder(1).Tasks(2), 0);  // fills host "full"
  Submit(state, JobBuilder(2).Tasks(8).ResReq("select[type==linux] rusage[mem=1000]"));
  std::vector<HostVerdict> verdicts = ExplainHosts(*state.FindJob(2), state);
  ASSERT_EQ(verdicts.size(), 6u);
  EXPECT_EQ(RenderHostVerdict(verdicts[0]), "Not enough job slots (0 free)");
  EXPECT_EQ(verdicts[1].code, ReasonCode::kHostClosed);
  EXPECT_EQ(verdicts[2].code, ReasonCode::kHostUnavail);
  EXPECT_EQ(RenderHostVerdict(verdicts[3]), "Not enough mem (needs 1000 per task, 500 free)");
  EXPECT_TRUE(verdicts[4].room);
  EXPECT_EQ(verdicts[4].available, 2);
  EXPECT_EQ(verdicts[5].code, ReasonCode::kNoMatch);
  EXPECT_EQ(RenderHostDetail(verdicts, state),
            "  full: Not enough job slots (0 free)\n"
            "  closed: Host is closed or draining\n"
            "  gone: Host is unavailable\n"
            "  lowmem: Not enough mem (needs 1000 per task, 500 free)\n"
            "  free: Has room for 2 tasks\n"
            "  gpu: Host does not satisfy the job's select[] requirement\n");
}

TEST(HostDetailTest, ExclusiveJobsNeedIdleHostsAndLinesGroupHosts) {
  ClusterState state = ClusterBuilder().Hosts(5, 2).State();
  SubmitRunning(state, JobBuilder(1).Tasks(1), 0);  // h1 busy, not full
  SubmitRunning(state, JobBuilder(3).Tasks(4), 0);  // h1 full, h2 full, h3 half
  Submit(state, JobBuilder(2).Tasks(8).Exclusive());
  std::vector<HostVerdict> verdicts = ExplainHosts(*state.FindJob(2), state);
  EXPECT_EQ(RenderHostDetail(verdicts, state, /*max_names=*/2),
            "  h1, h2 and 1 more: Exclusive job needs an idle host; the host runs other jobs\n"
            "  h4, h5: Has room for 2 tasks\n");
}

TEST(HostDetailTest, OnlyTheQueuesHosts) {
  ClusterConfig config = ClusterBuilder().Hosts(4, 1).Config();
  config.host_groups["two"] = {"h2", "h3"};
  config.queues[0].host_group = "two";
  Result<ClusterState> state = ClusterState::Create(config);
  ASSERT_TRUE(state.has_value());
  Submit(*state, JobBuilder(1).Tasks(3));
  std::vector<HostVerdict> verdicts = ExplainHosts(*state->FindJob(1), *state);
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(state->topology().hosts()[verdicts[0].host].spec.name, "h2");
  EXPECT_EQ(state->topology().hosts()[verdicts[1].host].spec.name, "h3");
}

}  // namespace
}  // namespace sluice::core
