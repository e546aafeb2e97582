// GPUs through whole cycles and the allocator (R-GPU-3, R-GPU-4): devices by index, disjoint
// between jobs, best fit that keeps whole hosts for wide jobs, NVLink sets, reasons that name
// the host and the constraint, and requests no host could ever meet refused up front.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/alloc/capacity.h"
#include "core/alloc/resreq_allocator.h"
#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "core/explain/host_detail.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::StartOf;
using testing::Submit;

uint64_t Mask(std::initializer_list<int> indexes) {
  uint64_t mask = 0;
  for (int i : indexes) mask |= uint64_t{1} << i;
  return mask;
}

// `gpus` devices known by index only, 8 slots.
HostSpec GpuHost(std::string name, int64_t gpus) {
  return HostSpec{.name = std::move(name), .slots = 8, .resources = {{"gpu", gpus}}};
}

// Four A100s linked in pairs 0-1 and 2-3.
HostSpec PairedHost(std::string name) {
  HostSpec spec{.name = std::move(name), .slots = 8};
  for (int i = 0; i < 4; ++i) {
    spec.gpus.push_back(GpuDevice{.index = i, .model = "A100", .memory_mb = 40960});
  }
  spec.gpus[0].nvlink = {1};
  spec.gpus[2].nvlink = {3};
  return spec;
}

// Starts job `id` holding `gpus` on `host` (one task).
void RunOn(ClusterState& state, JobId id, std::string_view host, uint64_t gpus) {
  Submit(state, JobBuilder(id));
  const HostIndex h = *state.topology().FindHost(host);
  const ResourceId gpu = *state.topology().FindHostResource("gpu");
  HostGrant grant{.host = h, .slots = 1, .resources = {{gpu, __builtin_popcountll(gpus)}}};
  grant.gpus = gpus;
  state.Start(id, Allocation{.hosts = {grant}}, 0);
  state.MarkClassified();
}

uint64_t GpusOf(const CycleResult& result, JobId id) {
  const StartJob* start = StartOf(result, id);
  if (start == nullptr) return 0;
  uint64_t gpus = 0;
  for (const HostGrant& grant : start->allocation.hosts) gpus |= grant.gpus;
  return gpus;
}

std::string HostOf(const ClusterState& state, const CycleResult& result, JobId id) {
  const StartJob* start = StartOf(result, id);
  if (start == nullptr || start->allocation.hosts.empty()) return "";
  return state.topology().hosts()[start->allocation.hosts[0].host].spec.name;
}

TEST(GpuCycleTest, ExclusiveJobsGetDisjointDevicesAndTheNextPendsNamingTheHost) {
  ClusterState state = ClusterBuilder().Host(GpuHost("g1", 4)).Policy(PolicyKind::kFifo).State();
  for (JobId id : {1, 2, 3}) Submit(state, JobBuilder(id).ResReq("gpu[num=2]"));
  CycleResult result = testing::CycleAndCommit(state, 0);
  EXPECT_EQ(GpusOf(result, 1), Mask({0, 1}));
  EXPECT_EQ(GpusOf(result, 2), Mask({2, 3}));
  // The count follows the devices: two of `gpu` per job.
  const StartJob* first = StartOf(result, 1);
  ASSERT_NE(first, nullptr);
  const ResourceId gpu = *state.topology().FindHostResource("gpu");
  EXPECT_EQ(first->allocation.hosts[0].resources, (std::vector<ResourceAmount>{{gpu, 2}}));
  auto reasons = ReasonsOf(result, 3);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kNoResource);
  ASSERT_FALSE(reasons->details.empty());
  const ReasonDetail& gpus = reasons->details[0];
  EXPECT_EQ(gpus.resource, "gpu");
  EXPECT_EQ(gpus.needed, 2);
  EXPECT_EQ(gpus.available, 0);
  EXPECT_EQ(gpus.scope, "host g1");
  // Committed: the topology holds exactly the two jobs' devices.
  EXPECT_EQ(state.topology().hosts()[0].gpus_used, 0xFu);
}

TEST(GpuCycleTest, BestFitLeavesAWholeHostForAWideJobWhereFirstFitWouldNot) {
  // g2 has one GPU left; a 1-GPU job goes there, not to the whole g1 (first in host order),
  // so the 4-GPU job behind it still starts.
  ClusterState state = ClusterBuilder()
                           .Host(GpuHost("g1", 4))
                           .Host(GpuHost("g2", 4))
                           .Policy(PolicyKind::kFifo)
                           .State();
  RunOn(state, 100, "g2", Mask({0, 1, 2}));
  Submit(state, JobBuilder(1).ResReq("gpu[num=1]"));
  Submit(state, JobBuilder(2).ResReq("gpu[num=4]"));
  CycleResult result = testing::ExplainedCycle(state, 0);
  EXPECT_EQ(HostOf(state, result, 1), "g2");
  EXPECT_EQ(GpusOf(result, 1), Mask({3}));
  EXPECT_EQ(HostOf(state, result, 2), "g1");
  EXPECT_EQ(GpusOf(result, 2), 0xFu);
}

TEST(GpuCycleTest, BestFitHoldsForMultiTaskAndMultiHostJobs) {
  // rusage[gpu=1] takes one device per task by index, packed the same way: 2 tasks fit g3's
  // two free devices, which is where they go rather than the whole g1.
  ClusterState state = ClusterBuilder()
                           .Host(GpuHost("g1", 4))
                           .Host(GpuHost("g2", 4))
                           .Host(GpuHost("g3", 4))
                           .Policy(PolicyKind::kFifo)
                           .State();
  RunOn(state, 100, "g2", Mask({0, 1, 2}));
  RunOn(state, 101, "g3", Mask({0, 1}));
  Submit(state, JobBuilder(1).Tasks(2).ResReq("rusage[gpu=1]"));
  Submit(state, JobBuilder(2).Tasks(2).ResReq("span[ptile=1] gpu[num=1]"));
  CycleResult result = testing::ExplainedCycle(state, 0);
  EXPECT_EQ(HostOf(state, result, 1), "g3");
  EXPECT_EQ(GpusOf(result, 1), Mask({2, 3}));
  // Two hosts of one task each with a GPU apiece: g2 (1 free) and then g1.
  const StartJob* wide = StartOf(result, 2);
  ASSERT_NE(wide, nullptr);
  ASSERT_EQ(wide->allocation.hosts.size(), 2u);
  EXPECT_EQ(state.topology().hosts()[wide->allocation.hosts[0].host].spec.name, "g1");
  EXPECT_EQ(state.topology().hosts()[wide->allocation.hosts[1].host].spec.name, "g2");
  EXPECT_EQ(wide->allocation.hosts[1].gpus, Mask({3}));
}

TEST(GpuCycleTest, GlinkTakesALinkedPairOrPendsSayingNoneIsFree) {
  ClusterState state = ClusterBuilder().Host(PairedHost("n1")).Policy(PolicyKind::kFifo).State();
  RunOn(state, 100, "n1", Mask({0, 2}));  // breaks both pairs: 1 and 3 are free, not linked
  Submit(state, JobBuilder(1).ResReq("gpu[num=2:glink=yes]"));
  CycleResult pending = testing::ExplainedCycle(state, 0);
  EXPECT_EQ(StartOf(pending, 1), nullptr);
  auto reasons = ReasonsOf(pending, 1);
  ASSERT_TRUE(reasons.has_value());
  ASSERT_FALSE(reasons->details.empty());
  EXPECT_EQ(reasons->details[0].devices, "NVLink-connected");
  EXPECT_EQ(reasons->details[0].available, 1);
  EXPECT_TRUE(reasons->details[0].one_host);

  ClusterState paired = ClusterBuilder().Host(PairedHost("n1")).Policy(PolicyKind::kFifo).State();
  RunOn(paired, 100, "n1", Mask({0}));
  Submit(paired, JobBuilder(1).ResReq("gpu[num=2:glink=yes]"));
  Submit(paired, JobBuilder(2).ResReq("gpu[num=1]"));
  CycleResult started = testing::ExplainedCycle(paired, 0);
  EXPECT_EQ(GpusOf(started, 1), Mask({2, 3}));
  EXPECT_EQ(GpusOf(started, 2), Mask({1}));  // next to the taken device 0
}

TEST(GpuCycleTest, PerHostDetailNamesTheDeviceConstraintOnEachHost) {
  ClusterState state = ClusterBuilder()
                           .Host(PairedHost("n1"))
                           .Host(PairedHost("n2"))
                           .Host(GpuHost("g1", 2))
                           .Policy(PolicyKind::kFifo)
                           .State();
  RunOn(state, 100, "n1", Mask({0, 2}));
  Submit(state, JobBuilder(1).ResReq("gpu[num=2:glink=yes]"));
  const std::vector<HostVerdict> verdicts = ExplainHosts(*state.FindJob(1), state);
  ASSERT_EQ(verdicts.size(), 3u);
  EXPECT_EQ(RenderHostVerdict(verdicts[0]),
            "Not enough gpu NVLink-connected (needs 2 per host, 1 free)");
  EXPECT_EQ(RenderHostVerdict(verdicts[1]), "Has room for 8 tasks");
  EXPECT_EQ(RenderHostVerdict(verdicts[2]),
            "Not enough gpu NVLink-connected (needs 2 per host, 1 free)");
}

TEST(GpuCycleTest, ModelAndMemoryNarrowTheDevices) {
  HostSpec mixed{.name = "m1", .slots = 8};
  mixed.gpus = {{.index = 0, .model = "V100", .memory_mb = 16384},
                {.index = 1, .model = "A100", .memory_mb = 40960},
                {.index = 2, .model = "A100", .memory_mb = 81920}};
  ClusterState state = ClusterBuilder().Host(mixed).Policy(PolicyKind::kFifo).State();
  Submit(state, JobBuilder(1).ResReq("gpu[gmodel=A100:gmem=80G]"));
  Submit(state, JobBuilder(2).ResReq("gpu[num=1:gmodel=A100]"));
  Submit(state, JobBuilder(3).ResReq("gpu[num=1:gmodel=A100]"));
  CycleResult result = testing::ExplainedCycle(state, 0);
  EXPECT_EQ(GpusOf(result, 1), Mask({2}));
  EXPECT_EQ(GpusOf(result, 2), Mask({1}));
  auto reasons = ReasonsOf(result, 3);
  ASSERT_TRUE(reasons.has_value());
  ASSERT_FALSE(reasons->details.empty());
  EXPECT_EQ(reasons->details[0].devices, "gmodel=A100");
}

TEST(GpuCycleTest, ARequestNoHostCouldEverMeetIsImpossibleAndSaysWhy) {
  ClusterState state = ClusterBuilder()
                           .Host(PairedHost("n1"))
                           .Host(GpuHost("g1", 2))
                           .Policy(PolicyKind::kFifo)
                           .State();
  struct Case {
    std::string resreq;
    bool feasible;
    std::string says;
  };
  const Case cases[] = {
      {"gpu[num=1:gmodel=H100]", false, "gmodel=H100"},
      {"gpu[num=5]", false, "5 gpu on one host"},
      {"gpu[num=4:glink=yes]", false, "NVLink-connected"},
      {"gpu[num=2:glink=yes]", true, ""},
      {"gpu[num=4]", true, ""},
      {"gpu[num=1/task]", true, ""},
  };
  JobId id = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.resreq);
    Submit(state, JobBuilder(id).ResReq(c.resreq));
    Capacity all = Capacity::AllConfigured(state);
    const Feasibility feasibility = ResreqAllocator().CheckFeasible(*state.FindJob(id), state, all);
    ++id;
    EXPECT_EQ(feasibility.ok, c.feasible) << feasibility.why;
    if (!c.feasible) {
      EXPECT_NE(feasibility.why.find(c.says), std::string::npos) << feasibility.why;
    }
  }
}

TEST(GpuCycleTest, CapacityRollbackRestoresDevicesAndTheBestFitIndex) {
  ClusterState state = ClusterBuilder()
                           .Host(GpuHost("g1", 4))
                           .Host(GpuHost("g2", 4))
                           .Policy(PolicyKind::kFifo)
                           .State();
  RunOn(state, 100, "g2", Mask({0}));
  Capacity capacity(state);
  auto order = [&](int32_t need) {
    std::vector<HostIndex> hosts;
    capacity.ForEachHostByFreeGpus(need, [&](HostIndex h) {
      hosts.push_back(h);
      return true;
    });
    return hosts;
  };
  EXPECT_EQ(order(1), (std::vector<HostIndex>{1, 0}));  // g2 (3 free) before g1 (4)
  const size_t mark = capacity.Mark();
  const ResourceId gpu = *state.topology().FindHostResource("gpu");
  HostGrant grant{.host = 0, .slots = 1, .resources = {{gpu, 2}}};
  grant.gpus = Mask({0, 1});
  capacity.ClaimHost(grant);
  EXPECT_EQ(capacity.FreeGpus(0), Mask({2, 3}));
  EXPECT_EQ(order(1), (std::vector<HostIndex>{0, 1}));
  EXPECT_EQ(order(3), (std::vector<HostIndex>{1}));
  capacity.Rollback(mark);
  EXPECT_EQ(capacity.FreeGpus(0), 0xFu);
  EXPECT_EQ(order(1), (std::vector<HostIndex>{1, 0}));
  EXPECT_EQ(order(4), (std::vector<HostIndex>{0}));
}

// Alice held 1 slot and 8 GPUs for an hour, bob 2 slots and no GPU: by slots alone alice
// used less and goes first; with GPU time charged (fairshare_gpu_weight, default 1) she used
// 9 slot-hours to bob's 2 and goes after him.
TEST(GpuCycleTest, FairshareChargesGpuTimeSoAHeavyGpuUserGoesAfterALightOne) {
  for (double weight : {1.0, 0.0}) {
    SCOPED_TRACE(weight);
    QueueSpec fair{.name = "fair", .fairshare = {{"default", 1}}, .fairshare_half_life = 86400};
    fair.fairshare_gpu_weight = weight;
    HostSpec host = GpuHost("g1", 8);
    host.slots = 2;
    ClusterState state = ClusterBuilder().Host(host).Queue(fair).State();
    Submit(state, JobBuilder(1).Queue("fair").User("alice").ResReq("gpu[num=8]"));
    Submit(state, JobBuilder(2).Tasks(2).Queue("fair").User("bob"));
    ASSERT_EQ(testing::Started(testing::CycleAndCommit(state, 0)), std::vector<JobId>{1});
    ASSERT_TRUE(Apply(JobFinished{.job = 1}, 3600, state).ok());
    ASSERT_EQ(testing::Started(testing::CycleAndCommit(state, 3600)), std::vector<JobId>{2});
    ASSERT_TRUE(Apply(JobFinished{.job = 2}, 7200, state).ok());
    Submit(state, JobBuilder(3).Tasks(2).Queue("fair").User("alice").Submit(7200));
    Submit(state, JobBuilder(4).Tasks(2).Queue("fair").User("bob").Submit(7200));
    const std::vector<JobId> first = testing::Started(testing::CycleAndCommit(state, 7201));
    EXPECT_EQ(first, std::vector<JobId>{weight > 0 ? JobId{4} : JobId{3}});
  }
}

TEST(GpuCycleDeathTest, ADeviceIsNeverGrantedTwice) {
  ClusterState state = ClusterBuilder().Host(GpuHost("g1", 4)).State();
  RunOn(state, 100, "g1", Mask({1}));
  Submit(state, JobBuilder(1));
  const ResourceId gpu = *state.topology().FindHostResource("gpu");
  HostGrant grant{.host = 0, .slots = 1, .resources = {{gpu, 1}}};
  grant.gpus = Mask({1});
  EXPECT_DEATH(state.Start(1, Allocation{.hosts = {grant}}, 0), "");
}

}  // namespace
}  // namespace sluice::core
