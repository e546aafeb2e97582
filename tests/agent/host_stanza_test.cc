// `sluice agent --detect`'s host stanza (agent/host_stanza.h): the detected GPUs as a `gpus:`
// list that the cluster YAML loader reads back into the same devices, and comments that say
// why GPUs are missing.
#include "agent/host_stanza.h"

#include <gtest/gtest.h>

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "config/cluster_yaml.h"
#include "testing/build_paths.h"
#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

GpuInventory TwoLinkedA100s() {
  GpuInventory inventory{.nvidia_smi = true};
  inventory.devices = {{.index = 0,
                        .model = "A100",
                        .memory_mb = 40960,
                        .uuid = "GPU-3c0e7a52-91d4",
                        .path = "/dev/nvidia0",
                        .numa = 0,
                        .nvlink = {1}},
                       {.index = 1,
                        .model = "A100",
                        .memory_mb = 40960,
                        .uuid = "[weird]",
                        .path = "/dev/nvidia1",
                        .numa = 1,
                        .nvlink = {0}}};
  inventory.names = {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"};
  return inventory;
}

TEST(HostStanzaTest, ListsTheDetectedGpus) {
  EXPECT_EQ(HostStanza({.name = "g1", .slots = 64, .memory_mb = 257000, .gpus = TwoLinkedA100s()}),
            "# `sluice agent --detect` on g1: nvidia-smi lists 2 GPUs.\n"
            "hosts:\n"
            "  - name: g1\n"
            "    slots: 64\n"
            "    resources: {mem: 257000}\n"
            "    gpus:\n"
            "      - {index: 0, model: A100, memory: 40960, numa: 0, nvlink: [1], uuid: "
            "GPU-3c0e7a52-91d4}  # NVIDIA A100-SXM4-40GB\n"
            "      - {index: 1, model: A100, memory: 40960, numa: 1, nvlink: [0]}  # NVIDIA "
            "A100-SXM4-40GB\n");
}

TEST(HostStanzaTest, ReadsBackAsTheSameDevices) {
  const std::string yaml = HostStanza({.name = "g1", .slots = 8, .gpus = TwoLinkedA100s()}) +
                           "queues:\n  - name: normal\n";
  Result<core::ClusterConfig> config = config::ParseClusterConfig(yaml, "detect.yaml");
  ASSERT_TRUE(config) << config.error().message() << "\n" << yaml;
  ASSERT_EQ(config->hosts.size(), 1u);
  std::vector<core::GpuDevice> want = TwoLinkedA100s().devices;
  want[1].uuid.clear();  // not printed: YAML would not read it back as it is
  std::vector<core::GpuDevice> got = config->hosts[0].gpus;
  for (core::GpuDevice& d : got) d.path = "/dev/nvidia" + std::to_string(d.index);  // the default
  EXPECT_EQ(got, want);
  EXPECT_EQ(config->hosts[0].resources.at("gpu"), 2);
}

TEST(HostStanzaTest, SaysWhyThereAreNoGpus) {
  const std::string none = HostStanza({.name = "c1", .slots = 4});
  EXPECT_NE(none.find("no nvidia-smi on PATH"), std::string::npos) << none;
  EXPECT_EQ(none.find("gpus:"), std::string::npos) << none;

  const std::string failed =
      HostStanza({.name = "c1", .gpus = Status(StatusCode::kUnavailable, "no answer\nkilled")});
  EXPECT_NE(failed.find("# `sluice agent --detect` on c1: GPU detection failed: no answer killed."),
            std::string::npos)
      << failed;
  EXPECT_EQ(failed.find("slots:"), std::string::npos) << failed;  // unknown: left out

  GpuInventory no_topology = TwoLinkedA100s();
  no_topology.topology_error = "nvidia-smi topo -m exited with status 3";
  EXPECT_NE(HostStanza({.name = "g1", .gpus = no_topology}).find("# NUMA nodes and NVLink unknown"),
            std::string::npos);
}

TEST(HostStanzaTest, MemTotalInMegabytes) {
  sluice::testing::TempDir proc;
  std::ofstream(proc.path() / "meminfo") << "MemTotal:       263178960 kB\nMemFree: 1 kB\n";
  EXPECT_EQ(ReadMemTotalMb(proc.path().string()), 257010);
  EXPECT_EQ(ReadMemTotalMb((proc.path() / "missing").string()), std::nullopt);
}

// The features a job selects on: the first CPU's listed extensions that are in the short list,
// in its order; Arm's "Features" line too; nothing without cpuinfo.
TEST(HostStanzaTest, CpuFeaturesFromCpuinfo) {
  sluice::testing::TempDir x86, arm;
  std::ofstream(x86.path() / "cpuinfo")
      << "processor\t: 0\nflags\t\t: fpu sse2 avx2 sse4_2 avx512f pni avx\n\n"
         "processor\t: 1\nflags\t\t: fpu sve2\n";
  const CpuFeatures found = ReadCpuFeatures("x86_64", x86.path().string());
  EXPECT_EQ(found.arch, "x86_64");
  EXPECT_EQ(found.tags, (std::vector<std::string>{"sse4_2", "avx", "avx2", "avx512f"}));
  std::ofstream(arm.path() / "cpuinfo") << "processor\t: 0\nFeatures\t: fp asimd aes sve\n";
  EXPECT_EQ(ReadCpuFeatures("aarch64", arm.path().string()).tags,
            (std::vector<std::string>{"aes", "asimd", "sve"}));
  EXPECT_TRUE(ReadCpuFeatures("", (arm.path() / "missing").string()).tags.empty());
}

TEST(HostStanzaTest, FeaturesReadBackAsAttributesAndTags) {
  const std::string yaml =
      HostStanza({.name = "n1", .slots = 4, .features = {"x86_64", {"avx", "avx512f"}}}) +
      "queues:\n  - name: normal\n";
  Result<core::ClusterConfig> config = config::ParseClusterConfig(yaml, "detect.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message() << "\n" << yaml;
  const core::HostSpec& host = config->hosts.at(0);
  EXPECT_EQ(host.attributes.at("arch"), "x86_64") << yaml;
  EXPECT_EQ(host.tags, (std::vector<std::string>{"avx", "avx512f"})) << yaml;
}

// The real `sluice agent --detect` on this machine (R-OPS-4): its stanza loads as a cluster
// YAML host whose slots are the online CPUs and whose mem is /proc/meminfo's MemTotal in MB.
TEST(HostStanzaTest, DetectOnThisMachineMatchesProc) {
  sluice::testing::TempDir scratch;
  const sluice::testing::ProcessResult run = sluice::testing::RunProcess(
      {sluice::testing::SluiceBinary(), "agent", "--detect", "--name", "here"}, scratch.path(),
      std::chrono::seconds(60));
  ASSERT_TRUE(run.error.empty()) << run.error;
  // No nvidia-smi here: the stanza is printed, and the exit says GPU detection failed or
  // found none; either way the cores and memory are what /proc says.
  Result<core::ClusterConfig> config = config::ParseClusterConfig(
      run.stdout_text + "queues:\n  - name: normal\n", "detect.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message() << "\n" << run.stdout_text;
  ASSERT_EQ(config->hosts.size(), 1u);
  const core::HostSpec& host = config->hosts[0];
  EXPECT_EQ(host.name, "here");
  EXPECT_EQ(host.slots, sysconf(_SC_NPROCESSORS_ONLN));
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  while (meminfo >> key && key != "MemTotal:") meminfo.ignore(256, '\n');
  meminfo >> kib;
  ASSERT_GT(kib, 0);
  ASSERT_TRUE(host.resources.contains("mem")) << run.stdout_text;
  EXPECT_EQ(host.resources.at("mem"), kib / 1024);
  // The features are this machine's: its architecture, and each listed extension its first
  // CPU's flags name.
  struct utsname names {};
  ASSERT_EQ(uname(&names), 0);
  ASSERT_TRUE(host.attributes.contains("arch")) << run.stdout_text;
  EXPECT_EQ(host.attributes.at("arch"), names.machine);
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpuinfo, line)) {
    if (line.starts_with("flags") || line.starts_with("Features")) {
      flags = " " + line.substr(line.find(':') + 1) + " ";
      break;
    }
  }
  for (const char* tag : kCpuFeatureTags) {
    const bool listed = flags.find(" " + std::string(tag) + " ") != std::string::npos;
    const bool tagged = std::find(host.tags.begin(), host.tags.end(), tag) != host.tags.end();
    EXPECT_EQ(listed, tagged) << tag << "\n" << run.stdout_text;
  }
}

}  // namespace
}  // namespace sluice::agent
