// Shared GPUs (R-GPU-3, gpu[mode=shared:gmem=M]): several jobs on one device up to its memory,
// packed onto devices already shared so free ones stay whole; never beside a job that holds
// the device whole; the memory given back when they end; and the request's rules.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/alloc/capacity.h"
#include "core/alloc/resreq_allocator.h"
#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::StartOf;
using testing::Submit;

constexpr const char* kShared6G = "gpu[num=1:mode=shared:gmem=6G]";

// `count` devices of 16 GB each, 8 slots.
HostSpec Host16G(std::string name, int count) {
  HostSpec spec{.name = std::move(name), .slots = 8};
  for (int i = 0; i < count; ++i) {
    spec.gpus.push_back(GpuDevice{.index = i, .model = "T4", .memory_mb = 16384});
  }
  return spec;
}

const HostGrant* GrantOf(const CycleResult& result, JobId id) {
  const StartJob* start = StartOf(result, id);
  return start == nullptr || start->allocation.hosts.empty() ? nullptr
                                                             : &start->allocation.hosts[0];
}

int64_t GpuCountUsed(const ClusterState& state) {
  return state.topology().hosts()[0].ResourceUsed(*state.topology().FindHostResource("gpu"));
}

TEST(GpuSharedCycleTest, JobsShareADeviceUpToItsMemoryAndPackBeforeTakingAFreeOne) {
  ClusterState state = ClusterBuilder().Host(Host16G("t1", 2)).Policy(PolicyKind::kFifo).State();
  for (JobId id : {1, 2, 3}) Submit(state, JobBuilder(id).ResReq(kShared6G));
  CycleResult result = testing::CycleAndCommit(state, 0);
  // 6 + 6 GB on device 0 (4 GB left there); the third needs 6 GB, so device 1.
  for (JobId id : {1, 2, 3}) ASSERT_NE(GrantOf(result, id), nullptr) << "job " << id;
  EXPECT_EQ(GrantOf(result, 1)->gpus, 0b01u);
  EXPECT_EQ(GrantOf(result, 2)->gpus, 0b01u);
  EXPECT_EQ(GrantOf(result, 3)->gpus, 0b10u);
  EXPECT_EQ(GrantOf(result, 1)->gpu_mem_mb, 6144);
  const core::Host& host = state.topology().hosts()[0];
  EXPECT_EQ(host.gpus_shared, 0b11u);
  EXPECT_EQ(host.gpus_used, 0u);
  EXPECT_EQ(host.GpuMemShared(0), 12288);
  EXPECT_EQ(host.GpuMemShared(1), 6144);
  EXPECT_EQ(GpuCountUsed(state), 0);  // shared grants do not count devices held whole
  // A later cycle: device 0 has 4 GB left, device 1 10 GB: the next 6 GB job goes to 1.
  Submit(state, JobBuilder(4).ResReq(kShared6G));
  result = testing::CycleAndCommit(state, 1);
  ASSERT_NE(GrantOf(result, 4), nullptr);
  EXPECT_EQ(GrantOf(result, 4)->gpus, 0b10u);
  // Now neither device has 6 GB left: the fifth pends, the reason naming the mode.
  Submit(state, JobBuilder(5).ResReq(kShared6G));
  result = testing::CycleAndCommit(state, 2);
  auto reasons = ReasonsOf(result, 5);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kNoResource);
  ASSERT_FALSE(reasons->details.empty());
  EXPECT_EQ(reasons->details[0].resource, "gpu");
  EXPECT_NE(reasons->details[0].devices.find("shared"), std::string::npos)
      << reasons->details[0].devices;
}

TEST(GpuSharedCycleTest, SharedAndWholeHoldersNeverMeetOnADevice) {
  ClusterState state = ClusterBuilder().Host(Host16G("t1", 2)).Policy(PolicyKind::kFifo).State();
  Submit(state, JobBuilder(1).ResReq("gpu[num=1]"));
  Submit(state, JobBuilder(2).ResReq(kShared6G));
  Submit(state, JobBuilder(3).ResReq("gpu[num=1]"));
  CycleResult result = testing::CycleAndCommit(state, 0);
  ASSERT_NE(GrantOf(result, 1), nullptr);
  ASSERT_NE(GrantOf(result, 2), nullptr);
  EXPECT_EQ(GrantOf(result, 1)->gpus, 0b01u);
  EXPECT_EQ(GrantOf(result, 2)->gpus, 0b10u);  // not the device job 1 holds whole
  EXPECT_EQ(GrantOf(result, 3), nullptr);      // nor may a whole job join the shared one
  EXPECT_EQ(GpuCountUsed(state), 1);
  // When the shared job ends, its device is whole again for job 3.
  ASSERT_TRUE(Apply(JobFinished{.job = 2}, 5, state).ok());
  EXPECT_EQ(state.topology().hosts()[0].gpus_shared, 0u);
  EXPECT_EQ(state.topology().hosts()[0].GpuMemShared(1), 0);
  result = testing::CycleAndCommit(state, 6);
  ASSERT_NE(GrantOf(result, 3), nullptr);
  EXPECT_EQ(GrantOf(result, 3)->gpus, 0b10u);
}

TEST(GpuSharedCycleTest, ARollbackGivesTheClaimedMemoryBack) {
  ClusterState state = ClusterBuilder().Host(Host16G("t1", 1)).Policy(PolicyKind::kFifo).State();
  Capacity capacity(state);
  const core::Host& host = state.topology().hosts()[0];
  EXPECT_EQ(capacity.ShareableGpus(host, 10240), 0b1u);
  const size_t mark = capacity.Mark();
  capacity.ClaimHost(HostGrant{.host = 0, .slots = 1, .gpus = 0b1, .gpu_mem_mb = 10240});
  EXPECT_EQ(capacity.FreeGpus(0), 0u);                 // no longer whole
  EXPECT_EQ(capacity.ShareableGpus(host, 6145), 0u);  // 6 GB left
  EXPECT_EQ(capacity.ShareableGpus(host, 6144), 0b1u);
  capacity.Rollback(mark);
  EXPECT_EQ(capacity.FreeGpus(0), 0b1u);
  EXPECT_EQ(capacity.ShareableGpus(host, 16384), 0b1u);
}

// Starts job `id` sharing `gpus` of host `h` with `mem_mb` reserved on each.
void RunShared(ClusterState& state, JobId id, HostIndex h, uint64_t gpus, int64_t mem_mb) {
  Submit(state, JobBuilder(id));
  state.Start(id, Allocation{.hosts = {HostGrant{.host = h, .slots = 1, .gpus = gpus,
                                                 .gpu_mem_mb = mem_mb}}},
              0);
  state.MarkClassified();
}

TEST(GpuSharedCycleTest, PackingPrefersAnotherHostsSharedDeviceToAFreeOne) {
  // t1: device 0 shared to the full, device 1 free; t2: device 0 shared with 10 GB left,
  // device 1 free. A 6 GB job goes to t2's device 0 (t1 is first in host order, and has a
  // free device, which must stay whole).
  ClusterState state = ClusterBuilder()
                           .Host(Host16G("t1", 2))
                           .Host(Host16G("t2", 2))
                           .Policy(PolicyKind::kFifo)
                           .State();
  RunShared(state, 100, 0, 0b01, 16384);
  RunShared(state, 101, 1, 0b01, 6144);
  Submit(state, JobBuilder(1).ResReq(kShared6G));
  CycleResult result = testing::CycleAndCommit(state, 0);
  const StartJob* start = StartOf(result, 1);
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->allocation.hosts[0].host, 1u);
  EXPECT_EQ(start->allocation.hosts[0].gpus, 0b01u);
  // A job of two shared devices takes one shared and one free where no host has two shared.
  Submit(state, JobBuilder(2).ResReq("gpu[num=2:mode=shared:gmem=2G]"));
  result = testing::CycleAndCommit(state, 1);
  start = StartOf(result, 2);
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->allocation.hosts[0].host, 1u);  // t2: 4 GB left on device 0, and device 1
  EXPECT_EQ(start->allocation.hosts[0].gpus, 0b11u);
}

TEST(GpuSharedCycleTest, PreemptingOneSharerLeavesTheDeviceSharedAndBothFreesIt) {
  ClusterState state = ClusterBuilder().Host(Host16G("t1", 1)).Policy(PolicyKind::kFifo).State();
  RunShared(state, 100, 0, 0b1, 6144);
  RunShared(state, 101, 0, 0b1, 8192);
  const core::Host& host = state.topology().hosts()[0];
  Capacity trial(state);
  EXPECT_EQ(trial.FreeGpus(0), 0u);
  EXPECT_EQ(trial.ShareableGpus(host, 2048), 0b1u);
  EXPECT_EQ(trial.ShareableGpus(host, 2049), 0u);
  const HostGrant& first = state.FindJob(100)->allocation.hosts[0];
  const HostGrant& second = state.FindJob(101)->allocation.hosts[0];
  trial.Credit(host, first, 1, false);
  EXPECT_EQ(trial.FreeGpus(0), 0u);  // still shared by the other: not whole for anyone
  EXPECT_EQ(trial.ShareableGpus(host, 8192), 0b1u);
  EXPECT_EQ(trial.ShareableGpus(host, 8193), 0u);
  trial.Credit(host, second, 1, true);
  EXPECT_EQ(trial.FreeGpus(0), 0b1u);  // its last sharer gone: whole again
  EXPECT_EQ(trial.ShareableGpus(host, 16384), 0b1u);
}

TEST(GpuSharedCycleTest, ARestoredAllocationThatOverbooksADeviceIsRefused) {
  ClusterState state = ClusterBuilder().Host(Host16G("t1", 2)).Policy(PolicyKind::kFifo).State();
  RunShared(state, 100, 0, 0b01, 12288);
  Submit(state, JobBuilder(200));
  const ResourceId gpu = *state.topology().FindHostResource("gpu");
  HostGrant whole{.host = 0, .slots = 1, .resources = {{gpu, 1}}, .gpus = 0b10};
  ASSERT_TRUE(Apply(AllocationRestored{.job = 200, .allocation = {.hosts = {whole}}}, 0, state).ok());
  struct Case {
    uint64_t gpus;
    int64_t mem_mb;
    const char* why;
  };
  const Case cases[] = {
      {0b01, 6144, "past device 0's memory (12 + 6 > 16 GB)"},
      {0b10, 1024, "device 1 is held whole"},
  };
  JobId id = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    Submit(state, JobBuilder(id));
    HostGrant shared{.host = 0, .slots = 1, .gpus = c.gpus, .gpu_mem_mb = c.mem_mb};
    EXPECT_FALSE(Apply(AllocationRestored{.job = id, .allocation = {.hosts = {shared}}}, 0, state)
                     .ok());
    ++id;
  }
  // Within memory it is restored.
  Submit(state, JobBuilder(id));
  HostGrant fits{.host = 0, .slots = 1, .gpus = 0b01, .gpu_mem_mb = 4096};
  EXPECT_TRUE(Apply(AllocationRestored{.job = id, .allocation = {.hosts = {fits}}}, 0, state).ok());
  EXPECT_EQ(state.topology().hosts()[0].GpuMemShared(0), 16384);
}

TEST(GpuSharedCycleTest, FeasibilityReadsConfiguredMemoryNotWhatRunningJobsReserve) {
  ClusterState state = ClusterBuilder().Host(Host16G("t1", 1)).Policy(PolicyKind::kFifo).State();
  RunShared(state, 100, 0, 0b1, 16384);  // the whole of the device's memory, shared
  struct Case {
    std::string resreq;
    bool feasible;
  };
  const Case cases[] = {
      {"gpu[num=1:mode=shared:gmem=8G]", true},  // waits for the sharer, is not refused
      {"gpu[num=1:mode=shared:gmem=16G]", true},
      {"gpu[num=1:mode=shared:gmem=17G]", false},  // more than the device has
      {"gpu[num=2:mode=shared:gmem=1G]", false},   // more devices than the host has
  };
  JobId id = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.resreq);
    Submit(state, JobBuilder(id).ResReq(c.resreq));
    Capacity all = Capacity::AllConfigured(state);
    const Feasibility feasibility = ResreqAllocator().CheckFeasible(*state.FindJob(id), state, all);
    EXPECT_EQ(feasibility.ok, c.feasible) << feasibility.why;
    ++id;
  }
  // And the pending one is told why it waits: the device is shared to its memory.
  CycleResult result = testing::ExplainedCycle(state, 1);
  auto reasons = ReasonsOf(result, 1);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kNoResource);
}

}  // namespace
}  // namespace sluice::core
