// GPU detection (agent/gpu_detect.h): nvidia-smi's query and `topo -m` outputs of real-looking
// machines read into devices (an 8-GPU DGX A100 behind NVSwitch, a DGX-1 hybrid cube mesh from
// a driver without the NUMA column, a 2-GPU PCIe box, a copy that lost its tabs), garbage
// refused with the line named and never a crash, the short model names, and DetectGpus
// against a fake nvidia-smi first on the search path (missing, failing, hanging, no devices).
#include "agent/gpu_detect.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "agent/fake_nvidia_smi.h"
#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;
using sluice::testing::PathWithFirst;
using sluice::testing::TempDir;
using sluice::testing::WriteFakeNvidiaSmi;
using sluice::testing::WriteFakeNvidiaSmiScript;

// A line of a `topo -m` matrix: cells joined by tabs, as nvidia-smi prints them.
std::string TabRow(std::initializer_list<std::string_view> cells) {
  std::string line;
  for (std::string_view cell : cells) line += (line.empty() ? "" : "\t") + std::string(cell);
  return line + "\n";
}

const std::string kDgxA100Query =
    "0, GPU-0d1e8c7a-5b2f-4e61-9a3c-7f4b2d8e1a01, NVIDIA A100-SXM4-40GB, 40960\n"
    "1, GPU-1f2a9d8b-6c3e-4f72-8b4d-8e5c3f9a2b12, NVIDIA A100-SXM4-40GB, 40960\n"
    "2, GPU-2a3b0e9c-7d4f-4083-9c5e-9f6d4a0b3c23, NVIDIA A100-SXM4-40GB, 40960\n"
    "3, GPU-3b4c1f0d-8e5a-4194-ad6f-a07e5b1c4d34, NVIDIA A100-SXM4-40GB, 40960\n"
    "4, GPU-4c5d2a1e-9f6b-42a5-be7a-b18f6c2d5e45, NVIDIA A100-SXM4-40GB, 40960\n"
    "5, GPU-5d6e3b2f-a07c-43b6-8f8b-c29a7d3e6f56, NVIDIA A100-SXM4-40GB, 40960\n"
    "6, GPU-6e7f4c3a-b18d-44c7-9a9c-d3ab8e4f7a67, NVIDIA A100-SXM4-40GB, 40960\n"
    "7, GPU-7f8a5d4b-c29e-45d8-abad-e4bc9f5a8b78, NVIDIA A100-SXM4-40GB, 40960\n";

// NVSwitch: every GPU has 12 NVLinks to every other. Ten NICs, an underlined header (escape
// codes), the GPU NUMA ID column of newer drivers with its empty cell before it, the legends.
const std::string kDgxA100Topo =
    "\x1b[4m" +
    TabRow({"",
            "GPU0",
            "GPU1",
            "GPU2",
            "GPU3",
            "GPU4",
            "GPU5",
            "GPU6",
            "GPU7",
            "NIC0",
            "NIC1",
            "NIC2",
            "NIC3",
            "NIC4",
            "NIC5",
            "NIC6",
            "NIC7",
            "NIC8",
            "NIC9",
            "CPU Affinity",
            "NUMA Affinity",
            "GPU NUMA ID\x1b[0m"}) +
    TabRow({"GPU0", " X ", "NV12", "NV12",          "NV12", "NV12", "NV12", "NV12",
            "NV12", "PXB", "PXB",  "SYS",           "SYS",  "SYS",  "SYS",  "SYS",
            "SYS",  "SYS", "SYS",  "48-63,176-191", "3",    "",     "N/A"}) +
    TabRow({"GPU1", "NV12", " X ", "NV12",          "NV12", "NV12", "NV12", "NV12",
            "NV12", "PXB",  "PXB", "SYS",           "SYS",  "SYS",  "SYS",  "SYS",
            "SYS",  "SYS",  "SYS", "48-63,176-191", "3",    "",     "N/A"}) +
    TabRow({"GPU2", "NV12", "NV12", " X ",           "NV12", "NV12", "NV12", "NV12",
            "NV12", "SYS",  "SYS",  "PXB",           "PXB",  "SYS",  "SYS",  "SYS",
            "SYS",  "SYS",  "SYS",  "16-31,144-159", "1",    "",     "N/A"}) +
    TabRow({"GPU3", "NV12", "NV12", "NV12",          " X ", "NV12", "NV12", "NV12",
            "NV12", "SYS",  "SYS",  "PXB",           "PXB", "SYS",  "SYS",  "SYS",
            "SYS",  "SYS",  "SYS",  "16-31,144-159", "1",   "",     "N/A"}) +
    TabRow(
        {"GPU4", "NV12", "NV12", "NV12", "NV12", " X ", "NV12", "NV12", "NV12", "SYS",
         "SYS",  "SYS",  "SYS",  "SYS",  "SYS",  "PXB", "PXB",  "SYS",  "SYS",  "112-127,240-255",
         "7",    "",     "N/A"}) +
    TabRow(
        {"GPU5", "NV12", "NV12", "NV12", "NV12", "NV12", " X ", "NV12", "NV12", "SYS",
         "SYS",  "SYS",  "SYS",  "SYS",  "SYS",  "PXB",  "PXB", "SYS",  "SYS",  "112-127,240-255",
         "7",    "",     "N/A"}) +
    TabRow({"GPU6", "NV12", "NV12", "NV12",          "NV12", "NV12", "NV12", " X ",
            "NV12", "SYS",  "SYS",  "SYS",           "SYS",  "SYS",  "SYS",  "SYS",
            "SYS",  "PXB",  "PXB",  "80-95,208-223", "5",    "",     "N/A"}) +
    TabRow({"GPU7", "NV12", "NV12", "NV12",          "NV12", "NV12", "NV12", "NV12",
            " X ",  "SYS",  "SYS",  "SYS",           "SYS",  "SYS",  "SYS",  "SYS",
            "SYS",  "PXB",  "PXB",  "80-95,208-223", "5",    "",     "N/A"}) +
    TabRow({"NIC0", "PXB", "PXB", "SYS", "SYS", "SYS", "SYS", "SYS", "SYS", " X ", "PXB", "SYS",
            "SYS", "SYS", "SYS", "SYS", "SYS", "SYS", "SYS"}) +
    TabRow({"NIC1", "PXB", "PXB", "SYS", "SYS", "SYS", "SYS", "SYS", "SYS", "PXB", " X ", "SYS",
            "SYS", "SYS", "SYS", "SYS", "SYS", "SYS", "SYS"}) +
    "\nLegend:\n\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
    "  PXB  = Connection traversing multiple PCIe bridges\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "\nNIC Legend:\n\n"
    "  NIC0: mlx5_0\n"
    "  NIC1: mlx5_1\n";

// A DGX-1 (V100): a hybrid cube mesh of NV1/NV2 links, four peers each; a driver that prints
// no NUMA Affinity column, and NICs named mlx5_*.
const std::string kDgx1Topo =
    TabRow({"", "GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7", "mlx5_0", "mlx5_2",
            "CPU Affinity"}) +
    TabRow({"GPU0", " X ", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS", "PIX", "SYS",
            "0-19,40-59"}) +
    TabRow({"GPU1", "NV1", " X ", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS", "PIX", "SYS",
            "0-19,40-59"}) +
    TabRow({"GPU2", "NV1", "NV2", " X ", "NV2", "SYS", "SYS", "NV1", "SYS", "PHB", "SYS",
            "0-19,40-59"}) +
    TabRow({"GPU3", "NV2", "NV1", "NV2", " X ", "SYS", "SYS", "SYS", "NV1", "PHB", "SYS",
            "0-19,40-59"}) +
    TabRow({"GPU4", "NV2", "SYS", "SYS", "SYS", " X ", "NV1", "NV1", "NV2", "SYS", "PIX",
            "20-39,60-79"}) +
    TabRow({"GPU5", "SYS", "NV2", "SYS", "SYS", "NV1", " X ", "NV2", "NV1", "SYS", "PIX",
            "20-39,60-79"}) +
    TabRow({"GPU6", "SYS", "SYS", "NV1", "SYS", "NV1", "NV2", " X ", "NV2", "SYS", "PHB",
            "20-39,60-79"}) +
    TabRow({"GPU7", "SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", " X ", "SYS", "PHB",
            "20-39,60-79"}) +
    TabRow({"mlx5_0", "PIX", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS", " X ", "SYS"}) +
    TabRow({"mlx5_2", "SYS", "SYS", "SYS", "SYS", "PIX", "PIX", "PHB", "PHB", "SYS", " X "}) +
    "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n";

// Two workstation cards on different sockets, no NVLink bridge.
const std::string kPcieBoxQuery =
    "0, GPU-9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d, NVIDIA RTX A6000, 49140\n"
    "1, GPU-0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0, NVIDIA RTX A6000, 49140\n";
const std::string kPcieBoxTopo =
    TabRow({"", "GPU0", "GPU1", "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"}) +
    TabRow({"GPU0", " X ", "SYS", "0-15,32-47", "0", "", "N/A"}) +
    TabRow({"GPU1", "SYS", " X ", "16-31,48-63", "1", "", "N/A"}) +
    "\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP "
    "interconnect between NUMA nodes (e.g., QPI/UPI)\n";

std::map<int32_t, GpuLinks> MustParseTopology(const std::string& text) {
  Result<std::map<int32_t, GpuLinks>> links = ParseGpuTopology(text);
  EXPECT_TRUE(links) << links.error().message();
  return links ? *links : std::map<int32_t, GpuLinks>{};
}

// --- The query -----------------------------------------------------------------------------------

TEST(GpuQueryTest, ReadsEachGpuOfADgxA100) {
  Result<std::vector<QueriedGpu>> gpus = ParseGpuQuery(kDgxA100Query);
  ASSERT_TRUE(gpus) << gpus.error().message();
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_EQ((*gpus)[3].index, 3);
  EXPECT_EQ((*gpus)[3].uuid, "GPU-3b4c1f0d-8e5a-4194-ad6f-a07e5b1c4d34");
  EXPECT_EQ((*gpus)[3].name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ((*gpus)[3].memory_mb, 40960);
}

TEST(GpuQueryTest, UnknownValuesCommasInNamesAndBlankLines) {
  Result<std::vector<QueriedGpu>> gpus = ParseGpuQuery(
      "\n1, [N/A], NVIDIA GH200 480GB, [N/A]\r\n0, GPU-ab, Some Card, Rev. 2, 24576\n\n");
  ASSERT_TRUE(gpus) << gpus.error().message();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].index, 1);
  EXPECT_EQ((*gpus)[0].uuid, "");
  EXPECT_EQ((*gpus)[0].memory_mb, 0);
  EXPECT_EQ((*gpus)[1].name, "Some Card, Rev. 2");
  EXPECT_EQ((*gpus)[1].memory_mb, 24576);
}

TEST(GpuQueryTest, NoLinesIsNoGpu) {
  Result<std::vector<QueriedGpu>> gpus = ParseGpuQuery("");
  ASSERT_TRUE(gpus);
  EXPECT_TRUE(gpus->empty());
}

TEST(GpuQueryTest, GarbageIsRefusedNamingTheLine) {
  std::string sixty_five;
  for (int i = 0; i < 65; ++i) sixty_five += std::to_string(i % 64) + ", GPU-x, A100, 1\n";
  struct Case {
    std::string_view name;
    std::string output;
    std::string line;
  };
  const std::vector<Case> cases = {
      {"a driver error", "NVIDIA-SMI has failed because it couldn't communicate with the driver",
       "line 1:"},
      {"too few fields", "0, GPU-1, NVIDIA A100\n", "line 1:"},
      {"index not a number", "0, GPU-1, A100, 1\nx, GPU-2, A100, 1\n", "line 2:"},
      {"index too large", "64, GPU-1, A100, 1\n", "line 1:"},
      {"negative index", "-1, GPU-1, A100, 1\n", "line 1:"},
      {"memory with a unit", "0, GPU-1, A100, 40960 MiB\n", "line 1:"},
      {"no name", "0, GPU-1, , 1\n", "line 1:"},
      {"an index twice", "0, GPU-1, A100, 1\n\n0, GPU-2, A100, 1\n", "line 3:"},
      {"a CSV header", "index, uuid, name, memory.total [MiB]\n", "line 1:"},
      {"more than 64 GPUs", sixty_five, "line 65:"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::vector<QueriedGpu>> gpus = ParseGpuQuery(c.output);
    ASSERT_FALSE(gpus);
    EXPECT_EQ(gpus.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(gpus.error().message().find(c.line), std::string::npos) << gpus.error().message();
  }
}

// --- The topology --------------------------------------------------------------------------------

TEST(GpuTopologyTest, DgxA100EveryGpuLinkedToEveryOtherWithItsNumaNode) {
  const std::map<int32_t, GpuLinks> links = MustParseTopology(kDgxA100Topo);
  ASSERT_EQ(links.size(), 8u);  // the NIC rows are not GPUs
  const std::vector<int32_t> numa = {3, 3, 1, 1, 7, 7, 5, 5};
  for (int32_t gpu = 0; gpu < 8; ++gpu) {
    SCOPED_TRACE(gpu);
    std::vector<int32_t> others;
    for (int32_t peer = 0; peer < 8; ++peer) {
      if (peer != gpu) others.push_back(peer);
    }
    EXPECT_EQ(links.at(gpu).nvlink, others);
    EXPECT_EQ(links.at(gpu).numa, numa[static_cast<size_t>(gpu)]);
  }
}

TEST(GpuTopologyTest, Dgx1HybridCubeMeshWithoutANumaColumn) {
  const std::map<int32_t, GpuLinks> links = MustParseTopology(kDgx1Topo);
  ASSERT_EQ(links.size(), 8u);
  EXPECT_EQ(links.at(0), (GpuLinks{.numa = -1, .nvlink = {1, 2, 3, 4}}));
  EXPECT_EQ(links.at(5), (GpuLinks{.numa = -1, .nvlink = {1, 4, 6, 7}}));
  EXPECT_EQ(links.at(7), (GpuLinks{.numa = -1, .nvlink = {3, 4, 5, 6}}));
}

TEST(GpuTopologyTest, TwoGpuPcieBoxHasNoLinksAndOneNodePerSocket) {
  const std::map<int32_t, GpuLinks> links = MustParseTopology(kPcieBoxTopo);
  EXPECT_EQ(links.at(0), (GpuLinks{.numa = 0}));
  EXPECT_EQ(links.at(1), (GpuLinks{.numa = 1}));
}

TEST(GpuTopologyTest, ACopyThatLostItsTabsReadsTheSame) {
  const std::string spaced =
      "        GPU0    GPU1    GPU2    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      NV4     SYS     0-23            0               N/A\n"
      "GPU1    NV4      X      SYS     0-23            0               N/A\n"
      "GPU2    SYS     SYS      X      24-47           N/A             N/A\n";
  const std::map<int32_t, GpuLinks> links = MustParseTopology(spaced);
  EXPECT_EQ(links.at(0), (GpuLinks{.numa = 0, .nvlink = {1}}));
  EXPECT_EQ(links.at(1), (GpuLinks{.numa = 0, .nvlink = {0}}));
  EXPECT_EQ(links.at(2), (GpuLinks{.numa = -1}));
}

TEST(GpuTopologyTest, OneGpu) {
  const std::map<int32_t, GpuLinks> links =
      MustParseTopology(TabRow({"", "GPU0", "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"}) +
                        TabRow({"GPU0", " X ", "0-7", "0", "", "N/A"}));
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links.at(0), (GpuLinks{.numa = 0}));
}

TEST(GpuTopologyTest, GarbageIsRefusedNamingTheLine) {
  const std::string header = TabRow({"", "GPU0", "GPU1", "CPU Affinity", "NUMA Affinity"});
  struct Case {
    std::string_view name;
    std::string output;
    std::string where;
  };
  const std::vector<Case> cases = {
      {"nothing", "", "no header"},
      {"a driver error", "NVIDIA-SMI has failed because it couldn't communicate with the driver\n",
       "no header"},
      {"a short row", header + TabRow({"GPU0", " X "}), "line 2:"},
      {"a NUMA node that is not one", header + TabRow({"GPU0", " X ", "NV2", "0-7", "zero"}),
       "line 2:"},
      {"a GPU twice",
       header + TabRow({"GPU0", " X ", "NV2", "0-7", "0"}) +
           TabRow({"GPU0", " X ", "NV2", "0-7", "0"}),
       "line 3:"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::map<int32_t, GpuLinks>> links = ParseGpuTopology(c.output);
    ASSERT_FALSE(links);
    EXPECT_EQ(links.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(links.error().message().find(c.where), std::string::npos) << links.error().message();
  }
}

// Whatever the bytes (a truncated answer, a driver's binary garbage), the parsers return an
// answer or an error; the seed is printed on failure.
TEST(GpuDetectTest, NoiseNeverCrashesTheParsers) {
  const std::vector<std::string> seeds = {kDgxA100Query, kDgxA100Topo, kDgx1Topo, kPcieBoxTopo};
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  for (int round = 0; round < 3000; ++round) {
    std::string text = seeds[random() % seeds.size()];
    text.resize(random() % (text.size() + 1));
    for (int flips = static_cast<int>(random() % 8); flips > 0 && !text.empty(); --flips) {
      const char alphabet[] = "\t\n ,X0123456789NVGPU-\x1b[";
      text[random() % text.size()] = random() % 4 == 0 ? static_cast<char>(random())
                                                       : alphabet[random() % (sizeof alphabet - 1)];
    }
    (void)ParseGpuQuery(text);
    (void)ParseGpuTopology(text);
    (void)ShortGpuModel(text);
  }
}

// --- Devices -------------------------------------------------------------------------------------

TEST(ShortGpuModelTest, KeepsTheWordThatNamesTheChip) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"NVIDIA A100-SXM4-40GB", "A100"},
      {"NVIDIA A100 80GB PCIe", "A100"},
      {"NVIDIA H100 80GB HBM3", "H100"},
      {"NVIDIA H100 NVL", "H100"},
      {"Tesla V100-SXM2-16GB", "V100"},
      {"Tesla T4", "T4"},
      {"NVIDIA L40S", "L40S"},
      {"NVIDIA GH200 480GB", "GH200"},
      {"NVIDIA RTX A6000", "A6000"},
      {"NVIDIA GeForce RTX 4090", "RTX4090"},
      {"Quadro RTX 8000", "RTX8000"},
      {"NVIDIA RTX 6000 Ada Generation", "RTX6000"},
      {"NVIDIA GeForce GTX 1080 Ti", "GTX1080"},
      {"NVIDIA TITAN V", "TITANV"},
      {"  NVIDIA   B200  ", "B200"},
      {"NVIDIA \"A100\"", "A100"},
  };
  for (const auto& [name, model] : cases) EXPECT_EQ(ShortGpuModel(name), model) << name;
}

TEST(GpuDevicesOfTest, DevicesCarryTheirTopologyWithLinksBothWays) {
  const std::vector<QueriedGpu> gpus = {
      {.index = 1, .uuid = "GPU-b", .name = "NVIDIA H100 80GB HBM3", .memory_mb = 81559},
      {.index = 0, .uuid = "GPU-a", .name = "NVIDIA H100 80GB HBM3", .memory_mb = 81559},
      {.index = 2, .name = "NVIDIA H100 80GB HBM3"}};
  // Only GPU0's row shows its link to GPU1; GPU1 names a GPU the query does not list; GPU2
  // has no row at all.
  const std::map<int32_t, GpuLinks> topology = {{0, {.numa = 1, .nvlink = {1}}},
                                                {1, {.numa = 1, .nvlink = {5}}}};
  const std::vector<core::GpuDevice> devices = GpuDevicesOf(gpus, topology);
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0], (core::GpuDevice{.index = 0,
                                         .model = "H100",
                                         .memory_mb = 81559,
                                         .uuid = "GPU-a",
                                         .path = "/dev/nvidia0",
                                         .numa = 1,
                                         .nvlink = {1}}));
  EXPECT_EQ(devices[1].nvlink, std::vector<int32_t>({0}));
  EXPECT_EQ(devices[2], (core::GpuDevice{.index = 2, .model = "H100", .path = "/dev/nvidia2"}));
}

// --- DetectGpus against a fake nvidia-smi
// ---------------------------------------------------------

TEST(DetectGpusTest, ReadsTheFakeFirstOnThePath) {
  TempDir dir;
  WriteFakeNvidiaSmi(dir.path(), kDgxA100Query, kDgxA100Topo);
  Result<GpuInventory> found = DetectGpus({.search_path = PathWithFirst(dir.path())});
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_TRUE(found->nvidia_smi);
  EXPECT_EQ(found->topology_error, "");
  ASSERT_EQ(found->devices.size(), 8u);
  EXPECT_EQ(found->devices[6].model, "A100");
  EXPECT_EQ(found->devices[6].numa, 5);
  EXPECT_EQ(found->devices[6].nvlink.size(), 7u);
  EXPECT_EQ(found->names[6], "NVIDIA A100-SXM4-40GB");
  const wire::GpuReport report = GpuReportOf(found);
  EXPECT_EQ(report.probe, wire::GpuProbe::kNvidiaSmi);
  EXPECT_EQ(report.devices, found->devices);
}

TEST(DetectGpusTest, NoNvidiaSmiIsNoGpuAndNoError) {
  TempDir dir;  // empty: nothing to find
  Result<GpuInventory> found = DetectGpus({.search_path = dir.path().string()});
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_FALSE(found->nvidia_smi);
  EXPECT_TRUE(found->devices.empty());
  EXPECT_EQ(GpuReportOf(found).probe, wire::GpuProbe::kNoNvidiaSmi);
}

TEST(DetectGpusTest, NoDevicesFoundIsZeroGpus) {
  TempDir dir;
  WriteFakeNvidiaSmiScript(dir.path(), "echo 'No devices were found'; exit 6");
  Result<GpuInventory> found = DetectGpus({.search_path = PathWithFirst(dir.path())});
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_TRUE(found->nvidia_smi);
  EXPECT_TRUE(found->devices.empty());
}

TEST(DetectGpusTest, ADriverThatFailsIsAnError) {
  TempDir dir;
  WriteFakeNvidiaSmiScript(dir.path(),
                           "echo \"NVIDIA-SMI has failed because it couldn't communicate with the "
                           "NVIDIA driver.\"; exit 9");
  Result<GpuInventory> found = DetectGpus({.search_path = PathWithFirst(dir.path())});
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code(), StatusCode::kUnavailable);
  const wire::GpuReport report = GpuReportOf(found);
  EXPECT_EQ(report.probe, wire::GpuProbe::kFailed);
  EXPECT_FALSE(report.error.empty());
}

TEST(DetectGpusTest, AnUnreadableTopologyLeavesTheDevicesWithoutIt) {
  TempDir dir;
  WriteFakeNvidiaSmiScript(dir.path(),
                           "if [ \"$1\" = topo ]; then echo 'topology not supported'; exit 3; fi\n"
                           "printf '0, GPU-a, NVIDIA L4, 23034\\n'");
  Result<GpuInventory> found = DetectGpus({.search_path = PathWithFirst(dir.path())});
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_EQ(found->devices.size(), 1u);
  EXPECT_EQ(
      found->devices[0],
      (core::GpuDevice{
          .index = 0, .model = "L4", .memory_mb = 23034, .uuid = "GPU-a", .path = "/dev/nvidia0"}));
  EXPECT_NE(found->topology_error, "");
}

// A driver call that never returns must not hang the agent: nvidia-smi is killed at the
// timeout and detection fails (the host then registers as "nvidia-smi failed").
TEST(DetectGpusTest, AHangingNvidiaSmiIsKilledAtTheTimeout) {
  TempDir dir;
  WriteFakeNvidiaSmiScript(dir.path(),
                           "echo $$ > '" + dir.path().string() + "/pid'; exec sleep 60");
  const auto start = std::chrono::steady_clock::now();
  Result<GpuInventory> found =
      // Long enough for a loaded machine to start the script and write its pid first.
      DetectGpus({.search_path = PathWithFirst(dir.path()), .timeout = 2s});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code(), StatusCode::kUnavailable);
  EXPECT_LT(took, 20s);  // bounded by the timeout, not by the sleep
  EXPECT_EQ(GpuReportOf(found).probe, wire::GpuProbe::kFailed);
  const std::optional<std::string> pid = sluice::testing::ReadFile(dir.path() / "pid");
  ASSERT_TRUE(pid && !pid->empty());
  EXPECT_FALSE(std::filesystem::exists("/proc/" + pid->substr(0, pid->find('\n'))))
      << "nvidia-smi still runs";
}

}  // namespace
}  // namespace sluice::agent
