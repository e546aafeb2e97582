// GPU fit and pick (R-GPU-3) on device masks: per host and per task, NVLink sets, NUMA
// affinity, best fit, and fits that match what picks deliver.
#include "core/alloc/gpu_fit.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/model/devices.h"

namespace sluice::core {
namespace {

uint64_t Mask(std::initializer_list<int> indexes) {
  uint64_t mask = 0;
  for (int i : indexes) mask |= uint64_t{1} << i;
  return mask;
}

// Eight GPUs: NVLink pairs 0-1, 2-3, 4-5, 6-7 plus 0-2, 1-3 (0..3 a linked quad); 0..3 on
// NUMA node 0, 4..7 on node 1.
HostDevices EightGpus() {
  HostSpec spec{.name = "g1"};
  for (int i = 0; i < 8; ++i) {
    GpuDevice gpu{.index = i, .model = "A100", .memory_mb = 40960, .numa = i < 4 ? 0 : 1};
    if (i % 2 == 0) gpu.nvlink.push_back(i + 1);
    spec.gpus.push_back(gpu);
  }
  spec.gpus[0].nvlink.push_back(2);
  spec.gpus[1].nvlink.push_back(3);
  spec.gpus[0].nvlink.push_back(3);
  spec.gpus[1].nvlink.push_back(2);
  return CompileDevices(spec, 8);
}

TEST(DevicesTest, ACountAloneGivesDevicesByIndexOnOneNode) {
  const HostDevices devices = CompileDevices(HostSpec{.name = "h"}, 3);
  EXPECT_EQ(devices.all, Mask({0, 1, 2}));
  EXPECT_EQ(devices.numa_groups, std::vector<uint64_t>{Mask({0, 1, 2})});
  EXPECT_TRUE(devices.peers.empty());
  EXPECT_EQ(CompileDevices(HostSpec{.name = "h"}, 64).count(), 64);
  EXPECT_EQ(CompileDevices(HostSpec{.name = "h"}, 0).all, 0u);
}

TEST(DevicesTest, LinksAreMadeSymmetricAndGroupsFollowNumaNodes) {
  const HostDevices devices = EightGpus();
  EXPECT_EQ(devices.all, 0xFFu);
  EXPECT_EQ(devices.PeersOf(1), Mask({0, 2, 3}));  // 1 listed 0 nowhere; 0 listed 1
  EXPECT_EQ(devices.PeersOf(7), Mask({6}));
  EXPECT_EQ(devices.numa_groups, (std::vector<uint64_t>{0x0Fu, 0xF0u}));
  HostSpec odd{.name = "h",
               .gpus = {{.index = 3, .numa = -1, .nvlink = {9}}, {.index = 5, .numa = 2}}};
  const HostDevices unknown = CompileDevices(odd, 2);
  EXPECT_EQ(unknown.all, Mask({3, 5}));
  EXPECT_EQ(unknown.PeersOf(3), 0u);  // device 9 does not exist
  // Known nodes first, devices of no known node as a last group.
  EXPECT_EQ(unknown.numa_groups, (std::vector<uint64_t>{Mask({5}), Mask({3})}));
}

TEST(GpuFitTest, PerHostDemandFitsEveryTaskOrNone) {
  const HostDevices devices = CompileDevices(HostSpec{.name = "h"}, 4);
  const GpuDemand two{.num = 2};
  EXPECT_EQ(GpuTaskFit(two, devices, Mask({1, 3})), kUnboundedGpuFit);
  EXPECT_EQ(GpuTaskFit(two, devices, Mask({3})), 0);
  EXPECT_EQ(PickGpus(two, devices, Mask({1, 2, 3}), Mask({1, 2, 3}), 5), Mask({1, 2}));
}

TEST(GpuFitTest, PerTaskDemandCountsTasksAndTakesNumPerTask) {
  const HostDevices devices = CompileDevices(HostSpec{.name = "h"}, 4);
  const GpuDemand one{.num = 1, .per_task = true};
  const GpuDemand two{.num = 2, .per_task = true};
  EXPECT_EQ(GpuTaskFit(one, devices, Mask({0, 2, 3})), 3);
  EXPECT_EQ(GpuTaskFit(two, devices, Mask({0, 2, 3})), 1);
  EXPECT_EQ(PickGpus(two, devices, 0xF, 0xF, 2), 0xFu);
}

TEST(GpuFitTest, LinkedSetsArePairwiseNvlinkConnected) {
  const HostDevices devices = EightGpus();
  const GpuDemand pair{.num = 2, .link = true};
  EXPECT_EQ(GpuTaskFit(pair, devices, Mask({1, 4, 6})), 0);  // no two of them linked
  EXPECT_EQ(GpuLargestSet(pair, devices, Mask({1, 4, 6})), 1);
  EXPECT_EQ(GpuTaskFit(pair, devices, Mask({1, 4, 5})), kUnboundedGpuFit);
  EXPECT_EQ(PickGpus(pair, devices, Mask({1, 4, 5}), Mask({1, 4, 5}), 1), Mask({4, 5}));
  const GpuDemand quad{.num = 4, .link = true};
  EXPECT_EQ(PickGpus(quad, devices, 0xFF, 0xFF, 1), 0x0Fu);  // the linked quad, not 4..7
  EXPECT_EQ(GpuTaskFit(quad, devices, 0xF0), 0);
  EXPECT_EQ(GpuLargestSet(quad, devices, 0xFF), 4);
  // Per task: disjoint linked pairs, as many as the greedy pick takes one after another.
  const GpuDemand pairs{.num = 2, .per_task = true, .link = true};
  EXPECT_EQ(GpuTaskFit(pairs, devices, 0xFF), 4);
  EXPECT_EQ(PickGpus(pairs, devices, 0xFF, 0xFF, 2), 0x0Fu);
  // Without NVLink, only a set of one is linked.
  const HostDevices plain = CompileDevices(HostSpec{.name = "h"}, 4);
  EXPECT_EQ(GpuTaskFit(pair, plain, 0xF), 0);
  EXPECT_EQ(GpuTaskFit(GpuDemand{.num = 1, .link = true}, plain, 0xF), kUnboundedGpuFit);
}

TEST(GpuFitTest, AffinityKeepsASetOnOneNumaNodeTheFullestThatFitsLast) {
  const HostDevices devices = EightGpus();
  const GpuDemand two{.num = 2, .affinity = true};
  // Node 0 has only device 3 free; node 1 has 4..7: the pair comes from node 1.
  EXPECT_EQ(PickGpus(two, devices, Mask({3, 4, 5, 6, 7}), Mask({3, 4, 5, 6, 7}), 1), Mask({4, 5}));
  EXPECT_EQ(GpuTaskFit(two, devices, Mask({3, 4})), 0);  // two free, on two nodes
  EXPECT_EQ(GpuLargestSet(two, devices, Mask({3, 4})), 1);
  // Best fit: node 0 has 2 free, node 1 has 4; the pair takes node 0's, keeping node 1 whole.
  EXPECT_EQ(PickGpus(two, devices, Mask({2, 3, 4, 5, 6, 7}), Mask({2, 3, 4, 5, 6, 7}), 1),
            Mask({2, 3}));
  const GpuDemand per_task{.num = 2, .per_task = true, .affinity = true};
  EXPECT_EQ(GpuTaskFit(per_task, devices, Mask({0, 1, 2, 4, 5, 6})), 2);  // 3 on each node
  const uint64_t picked =
      PickGpus(per_task, devices, Mask({0, 1, 2, 4, 5, 6}), Mask({0, 1, 2, 4, 5, 6}), 2);
  EXPECT_EQ(__builtin_popcountll(picked & 0x0F), 2);
  EXPECT_EQ(__builtin_popcountll(picked & 0xF0), 2);
}

TEST(GpuFitTest, SingleDevicesGoNextToTakenPeersAndLeaveLinkedGroupsWhole) {
  const HostDevices devices = EightGpus();
  const GpuDemand one{.num = 1};
  // Device 0 is taken: 1 (linked to 0) is taken next, not 4 or 6 whose pairs are whole.
  const uint64_t free = 0xFE;
  EXPECT_EQ(PickGpus(one, devices, free, free, 1), Mask({1}));
  // Without NVLink the lowest index.
  const HostDevices plain = CompileDevices(HostSpec{.name = "h"}, 4);
  EXPECT_EQ(PickGpus(one, plain, Mask({2, 3}), Mask({2, 3}), 1), Mask({2}));
}

TEST(GpuFitTest, FitsAndPicksAgreeOnEveryFreeMask) {
  // For every free subset of the eight devices and each demand shape, a fit of T tasks means
  // picks for T tasks succeed with the right count, within the free devices, satisfying the
  // constraints; and T+1 is never offered when fewer fit.
  const HostDevices devices = EightGpus();
  const std::vector<GpuDemand> demands = {
      {.num = 1},
      {.num = 2, .link = true},
      {.num = 3, .affinity = true},
      {.num = 1, .per_task = true},
      {.num = 2, .per_task = true, .link = true},
      {.num = 2, .per_task = true, .affinity = true},
      {.num = 2, .per_task = true, .link = true, .affinity = true}};
  for (const GpuDemand& demand : demands) {
    for (uint64_t free = 0; free < 256; ++free) {
      const int32_t fit = GpuTaskFit(demand, devices, free);
      const int32_t tasks = fit == kUnboundedGpuFit ? 3 : fit;
      if (tasks == 0) continue;
      const uint64_t picked = PickGpus(demand, devices, free, free, tasks);
      SCOPED_TRACE(::testing::Message() << "num " << demand.num << " free " << free);
      EXPECT_EQ(picked & ~free, 0u);
      EXPECT_EQ(__builtin_popcountll(picked), demand.NeedFor(tasks));
      if (!demand.per_task && demand.link) {
        for (uint64_t rest = picked; rest != 0; rest &= rest - 1) {
          const int i = __builtin_ctzll(rest);
          EXPECT_EQ(picked & ~devices.PeersOf(i) & ~(uint64_t{1} << i), 0u);
        }
      }
      if (!demand.per_task && demand.affinity) {
        EXPECT_TRUE((picked & ~0x0Fu) == 0 || (picked & ~0xF0u) == 0);
      }
    }
  }
}

TEST(GpuFitTest, DemandComesFromGpuOrFromRusageGpu) {
  resreq::Primary gpu;
  gpu.gpu = {.num = 2, .per = resreq::GpuPer::kTask, .link = true};
  const GpuDemand from_gpu = GpuDemandOf(gpu, true);
  EXPECT_EQ(from_gpu.num, 2);
  EXPECT_TRUE(from_gpu.per_task);
  EXPECT_TRUE(from_gpu.link);
  resreq::Primary rusage;
  rusage.rusage = {{"gpu", 1.5}, {"mem", 10}};
  const GpuDemand from_rusage = GpuDemandOf(rusage, true);
  EXPECT_EQ(from_rusage.num, 2);  // whole devices, rounded up
  EXPECT_TRUE(from_rusage.per_task);
  EXPECT_FALSE(GpuDemandOf(rusage, false).any());  // `gpu` a shared resource, not devices
}

}  // namespace
}  // namespace sluice::core
