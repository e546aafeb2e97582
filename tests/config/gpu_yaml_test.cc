// Tests for a host's `gpus:` in the cluster YAML (config/gpu_yaml.h): each of the three forms,
// the count resource they set, and each mistake with its `file:line: field path:` location
// and the gist of what was expected (a fragment, not the whole text: STYLE.md).
#include "config/gpu_yaml.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/cluster_yaml.h"

namespace sluice::config {
namespace {

using core::ClusterConfig;
using core::GpuDevice;
using core::HostSpec;

// The hosts section `hosts` (starting at line 1 after its leading newline) and one queue.
Result<ClusterConfig> Parse(std::string_view hosts) {
  if (!hosts.empty() && hosts.front() == '\n') hosts.remove_prefix(1);
  return ParseClusterConfig(std::string(hosts) + "queues: [{name: a}]\n", "g.yaml");
}

GpuDevice Device(int32_t index, std::string model = "", int64_t memory_mb = 0) {
  return GpuDevice{.index = index, .model = std::move(model), .memory_mb = memory_mb};
}

struct FormCase {
  std::string_view name;
  std::string_view yaml;
  std::vector<GpuDevice> want_gpus;
  bool want_auto = false;
  int64_t want_count = -1;  // resources["gpu"]; -1: not set
};

const FormCase kFormCases[] = {
    {"a count with model and memory", R"(
hosts:
  - {name: g1, gpus: 2, gpu_model: A100, gpu_memory: 40G}
)",
     {Device(0, "A100", 40960), Device(1, "A100", 40960)},
     false,
     2},
    {"a count with memory in MB", R"(
hosts:
  - {name: g1, gpus: 1, gpu_memory: 16384}
)",
     {Device(0, "", 16384)},
     false,
     1},
    {"a count with a fractional size and a quoted model with spaces", R"(
hosts:
  - {name: g1, gpus: 1, gpu_model: "NVIDIA A100-SXM4-80GB", gpu_memory: 1.5GB}
)",
     {Device(0, "NVIDIA A100-SXM4-80GB", 1536)},
     false,
     1},
    {"a count alone: devices known by index only", R"(
hosts:
  - {name: g1, gpus: 3}
)",
     {Device(0), Device(1), Device(2)},
     false,
     3},
    {"zero GPUs", R"(
hosts:
  - {name: g1, gpus: 0}
)",
     {},
     false,
     0},
    {"auto: no devices and no count yet", R"(
hosts:
  - {name: g1, gpus: auto}
)",
     {},
     true,
     -1},
    {"a list in any order, sorted by index", R"(
hosts:
  - name: g1
    gpus:
      - {index: 3, model: V100, memory: 512M}
      - {index: 1, uuid: GPU-1, path: /dev/nvidia1, numa: 1}
)",
     {GpuDevice{.index = 1, .uuid = "GPU-1", .path = "/dev/nvidia1", .numa = 1},
      Device(3, "V100", 512)},
     false,
     2},
    {"an equal resources.gpu is accepted", R"(
hosts:
  - name: g1
    resources: {gpu: 2, mem: 1000}
    gpus: 2
)",
     {Device(0), Device(1)},
     false,
     2},
    {"an empty list", R"(
hosts:
  - {name: g1, gpus: []}
)",
     {},
     false,
     0},
};

TEST(GpuYamlTest, ReadsEachForm) {
  for (const FormCase& c : kFormCases) {
    SCOPED_TRACE(c.name);
    Result<ClusterConfig> config = Parse(c.yaml);
    ASSERT_TRUE(config.has_value()) << config.error().message();
    ASSERT_EQ(config->hosts.size(), 1u);
    const HostSpec& host = config->hosts[0];
    EXPECT_EQ(host.gpus, c.want_gpus);
    EXPECT_EQ(host.gpus_auto, c.want_auto);
    const auto count = host.resources.find("gpu");
    EXPECT_EQ(count == host.resources.end() ? -1 : count->second, c.want_count);
  }
}

TEST(GpuYamlTest, NvlinkIsMadeSymmetricAndSorted) {
  Result<ClusterConfig> config = Parse(R"(
hosts:
  - name: g1
    gpus:
      - {index: 0, nvlink: [2, 1]}
      - {index: 1}
      - {index: 2, nvlink: [0, 3]}
      - {index: 3}
)");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  const std::vector<GpuDevice>& gpus = config->hosts[0].gpus;
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[0].nvlink, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(gpus[1].nvlink, (std::vector<int32_t>{0}));
  EXPECT_EQ(gpus[2].nvlink, (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(gpus[3].nvlink, (std::vector<int32_t>{2}));
}

TEST(GpuYamlTest, EveryHostOfARangeGetsTheDevices) {
  Result<ClusterConfig> config = Parse(R"(
hosts:
  - {name: "g[1-3]", gpus: 2, gpu_model: H100}
)");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->hosts.size(), 3u);
  for (const HostSpec& host : config->hosts) {
    EXPECT_EQ(host.gpus, (std::vector<GpuDevice>{Device(0, "H100"), Device(1, "H100")}));
    EXPECT_EQ(host.resources.at("gpu"), 2);
  }
}

// The count is a host resource like any other: limits and queue requests may name it.
TEST(GpuYamlTest, TheCountIsADefinedResource) {
  Result<ClusterConfig> config = ParseClusterConfig(R"(hosts:
  - {name: g1, gpus: 4}
queues:
  - {name: gpu, default_resreq: "rusage[gpu=1]"}
limits:
  - {name: g, per_user: all, gpu: 2}
)",
                                                    "g.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  EXPECT_EQ(config->limits[0].resources.at("gpu"), 2);
}

struct ErrorCase {
  std::string_view name;
  std::string_view yaml;
  std::string_view want_prefix;  // `file:line: field path:`
  std::string_view want_what;    // in the rest of the message
};

const ErrorCase kErrorCases[] = {
    {"count not a number", R"(
hosts:
  - {name: g1, gpus: four}
)",
     "g.yaml:2: hosts[0].gpus:", "expected a GPU count, auto or a list of GPUs, got 'four'"},
    {"negative count", R"(
hosts:
  - {name: g1, gpus: -1}
)",
     "g.yaml:2: hosts[0].gpus:", "expected a GPU count"},
    {"quoted count", R"(
hosts:
  - {name: g1, gpus: "4"}
)",
     "g.yaml:2: hosts[0].gpus:", "expected a GPU count"},
    {"count above the maximum", R"(
hosts:
  - {name: g1, gpus: 65}
)",
     "g.yaml:2: hosts[0].gpus:", "65 > 64"},
    {"a map instead of a list", R"(
hosts:
  - name: g1
    gpus: {index: 0}
)",
     "g.yaml:3: hosts[0].gpus:", "expected a GPU count, auto or a list of GPUs, got a map"},
    {"device not a map", R"(
hosts:
  - name: g1
    gpus: [0, 1]
)",
     "g.yaml:3: hosts[0].gpus[0]:", "expected a map of GPU settings"},
    {"missing index", R"(
hosts:
  - name: g1
    gpus:
      - {model: A100}
)",
     "g.yaml:4: hosts[0].gpus[0]:", "missing required key 'index'"},
    {"index above the maximum", R"(
hosts:
  - name: g1
    gpus:
      - {index: 64}
)",
     "g.yaml:4: hosts[0].gpus[0].index:", "64 > 63"},
    {"negative index", R"(
hosts:
  - name: g1
    gpus:
      - {index: -1}
)",
     "g.yaml:4: hosts[0].gpus[0].index:", "expected a non-negative integer"},
    {"duplicate index", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0}
      - {index: 1}
      - {index: 0}
)",
     "g.yaml:6: hosts[0].gpus[2].index:", "duplicate GPU index 0 (first on line 4)"},
    {"unknown device key", R"(
hosts:
  - name: g1
    gpus:
      - index: 0
        speed: 9
)",
     "g.yaml:5: hosts[0].gpus[0].speed:", "unknown key"},
    {"nvlink to a missing device", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0, nvlink: [1]}
      - {index: 2}
)",
     "g.yaml:4: hosts[0].gpus[0].nvlink[0]:", "no GPU with index 1 on this host"},
    {"nvlink to itself", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0}
      - {index: 1, nvlink: [0, 1]}
)",
     "g.yaml:5: hosts[0].gpus[1].nvlink[1]:", "not its own NVLink peer"},
    {"nvlink peer twice", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0, nvlink: [1, 1]}
      - {index: 1}
)",
     "g.yaml:4: hosts[0].gpus[0].nvlink[1]:", "peer 1 listed twice"},
    {"nvlink not a list", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0, nvlink: 1}
)",
     "g.yaml:4: hosts[0].gpus[0].nvlink:", "expected a list of GPU indexes"},
    {"relative path", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0, path: dev/nvidia0}
)",
     "g.yaml:4: hosts[0].gpus[0].path:", "expected an absolute path"},
    {"negative memory", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0, memory: -5}
)",
     "g.yaml:4: hosts[0].gpus[0].memory:", "expected a size in MB or with a unit"},
    {"memory with an unknown unit", R"(
hosts:
  - {name: g1, gpus: 1, gpu_memory: 40X}
)",
     "g.yaml:2: hosts[0].gpu_memory:", "expected a size in MB or with a unit"},
    {"negative numa node", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0, numa: -1}
)",
     "g.yaml:4: hosts[0].gpus[0].numa:", "expected a non-negative integer"},
    {"model with a quote", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0, model: "A'100"}
)",
     "g.yaml:4: hosts[0].gpus[0].model:", "expected a model name without quotes"},
    {"gpu_model with a list", R"(
hosts:
  - name: g1
    gpus:
      - {index: 0}
    gpu_model: A100
)",
     "g.yaml:5: hosts[0].gpu_model:", "only with a GPU count"},
    {"gpu_memory with auto", R"(
hosts:
  - name: g1
    gpus: auto
    gpu_memory: 40G
)",
     "g.yaml:4: hosts[0].gpu_memory:", "only with a GPU count"},
    {"gpu_model without gpus", R"(
hosts:
  - name: g1
    gpu_model: A100
)",
     "g.yaml:3: hosts[0].gpu_model:", "only with a GPU count"},
    {"resources.gpu differs from the devices", R"(
hosts:
  - name: g1
    gpus: 2
    resources:
      mem: 100
      gpu: 4
)",
     "g.yaml:6: hosts[0].resources.gpu:", "4 differs from the 2 GPUs of `gpus` on line 3"},
    {"resources.gpu differs from a list", R"(
hosts:
  - name: g1
    resources: {gpu: 2}
    gpus:
      - {index: 5}
)",
     "g.yaml:3: hosts[0].resources.gpu:", "2 differs from the 1 GPUs"},
    {"resources.gpu with auto", R"(
hosts:
  - name: g1
    gpus: auto
    resources: {gpu: 2}
)",
     "g.yaml:4: hosts[0].resources.gpu:", "not allowed with `gpus: auto` on line 3"},
};

TEST(GpuYamlTest, RejectsMistakesWithTheirLocation) {
  for (const ErrorCase& c : kErrorCases) {
    SCOPED_TRACE(c.name);
    Result<ClusterConfig> result = Parse(c.yaml);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), StatusCode::kInvalidArgument);
    const std::string& message = result.error().message();
    EXPECT_TRUE(message.starts_with(std::string(c.want_prefix) + " "))
        << "want prefix '" << c.want_prefix << "', got: " << message;
    EXPECT_NE(message.find(c.want_what), std::string::npos)
        << "want '" << c.want_what << "', got: " << message;
  }
}

// Each copy of a host's devices and links counts in the file-wide budget: 100,000 hosts with
// 8 fully linked GPUs cost 100,000 x (8 devices + 56 links + 1 resource), above 1,000,000.
TEST(GpuYamlTest, DevicesCountInTheExpansionBudget) {
  std::string yaml = "hosts:\n  - name: \"h[1-100000]\"\n    gpus:\n";
  for (int i = 0; i < 8; ++i) {
    std::string peers;
    for (int j = 0; j < 8; ++j) {
      if (j != i) peers += (peers.empty() ? "" : ", ") + std::to_string(j);
    }
    yaml += "      - {index: " + std::to_string(i) + ", nvlink: [" + peers + "]}\n";
  }
  yaml += "queues: [{name: a}]\n";
  Result<ClusterConfig> result = ParseClusterConfig(yaml, "big.yaml");
  ASSERT_FALSE(result.has_value());
  EXPECT_TRUE(result.error().message().starts_with("big.yaml:2: hosts[0].name: "))
      << result.error().message();

  EXPECT_EQ(yaml::GpuCost({GpuDevice{.index = 0, .nvlink = {1}}, GpuDevice{.index = 1}}), 3u);
}

}  // namespace
}  // namespace sluice::config
