// The GPUs an agent detected, in its registration (wire::GpuReport, R-GPU-1): a round trip,
// absent when the agent did not look, NVLink made symmetric and devices sorted when decoded,
// and each malformed value refused naming its field.
#include <gtest/gtest.h>

#include "wire/agent_protocol.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

TEST(RegisterGpusTest, RoundTrip) {
  const GpuReport report{
      .probe = GpuProbe::kNvidiaSmi,
      .devices = {{.index = 0,
                   .model = "A100",
                   .memory_mb = 40960,
                   .uuid = "GPU-3c0e7a52",
                   .path = "/dev/nvidia0",
                   .numa = 0,
                   .nvlink = {1}},
                  {.index = 1, .model = "A100", .path = "/dev/nvidia1", .nvlink = {0}}}};
  const json body = EncodeRegister({.host = {.name = "g1", .slots = 8}, .gpus = report});
  EXPECT_EQ(body["gpus"]["probe"], "nvidia-smi");
  EXPECT_FALSE(body["gpus"]["devices"][1].contains("numa"));  // unknown values are left out
  Result<RegisterRequest> decoded = DecodeRegister(body);
  ASSERT_TRUE(decoded) << decoded.error().message();
  ASSERT_TRUE(decoded->gpus.has_value());
  EXPECT_EQ(*decoded->gpus, report);
}

TEST(RegisterGpusTest, AbsentWhenTheAgentDidNotLook) {
  const json body = EncodeRegister({.host = {.name = "h1"}});
  EXPECT_FALSE(body.contains("gpus"));
  Result<RegisterRequest> decoded = DecodeRegister(body);
  ASSERT_TRUE(decoded);
  EXPECT_FALSE(decoded->gpus.has_value());
}

TEST(RegisterGpusTest, FailuresTravelWithTheirReason) {
  const GpuReport failed{.probe = GpuProbe::kFailed, .error = "nvidia-smi: no answer; killed"};
  Result<RegisterRequest> decoded =
      DecodeRegister(EncodeRegister({.host = {.name = "h1"}, .gpus = failed}));
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(*decoded->gpus, failed);
}

TEST(RegisterGpusTest, DecodedDevicesAreSortedWithLinksBothWays) {
  const json sent =
      json::array({json{{"index", 2}, {"nvlink", json::array({0})}}, json{{"index", 0}}});
  const json body = {{"name", "g1"}, {"gpus", {{"probe", "nvidia-smi"}, {"devices", sent}}}};
  Result<RegisterRequest> decoded = DecodeRegister(body);
  ASSERT_TRUE(decoded) << decoded.error().message();
  const std::vector<core::GpuDevice>& devices = decoded->gpus->devices;
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].index, 0);
  EXPECT_EQ(devices[0].nvlink, std::vector<int32_t>({2}));
  EXPECT_EQ(devices[1].nvlink, std::vector<int32_t>({0}));
}

TEST(RegisterGpusTest, ErrorsNameTheField) {
  const auto with = [](json gpus) { return json{{"name", "g1"}, {"gpus", std::move(gpus)}}; };
  const auto device = [](json d) { return json{{"probe", "nvidia-smi"}, {"devices", {d}}}; };
  json too_many = json::array();
  for (int i = 0; i < 65; ++i) too_many.push_back({{"index", i % 64}});
  struct Case {
    std::string_view name;
    json body;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"not an object", with(json::array()), "gpus"},
      {"unknown field", with({{"probe", "none"}, {"color", 1}}), "gpus.color"},
      {"no probe", with(json::object()), "gpus.probe"},
      {"unknown probe", with({{"probe", "rocm-smi"}}), "gpus.probe"},
      {"devices without nvidia-smi", with({{"probe", "none"}, {"devices", {{{"index", 0}}}}}),
       "gpus.devices"},
      {"too many devices", with({{"probe", "nvidia-smi"}, {"devices", too_many}}), "gpus.devices"},
      {"an error too long", with({{"probe", "failed"}, {"error", std::string(1025, 'x')}}),
       "gpus.error"},
      {"no index", with(device(json::object())), "gpus.devices[0].index"},
      {"index 64", with(device({{"index", 64}})), "gpus.devices[0].index"},
      {"unknown device field", with(device({{"index", 0}, {"bus", 3}})), "gpus.devices[0].bus"},
      {"a quoted model", with(device({{"index", 0}, {"model", "A\"100"}})),
       "gpus.devices[0].model"},
      {"negative memory", with(device({{"index", 0}, {"memory_mb", -1}})),
       "gpus.devices[0].memory_mb"},
      {"relative path", with(device({{"index", 0}, {"path", "dev/nvidia0"}})),
       "gpus.devices[0].path"},
      {"numa -2", with(device({{"index", 0}, {"numa", -2}})), "gpus.devices[0].numa"},
      {"nvlink not a list", with(device({{"index", 0}, {"nvlink", 1}})), "gpus.devices[0].nvlink"},
      {"nvlink to itself", with(device({{"index", 0}, {"nvlink", {0}}})), "gpus.devices: GPU 0"},
      {"nvlink to a GPU not listed", with(device({{"index", 0}, {"nvlink", {3}}})),
       "gpus.devices: GPU 0"},
      {"an index twice",
       with({{"probe", "nvidia-smi"}, {"devices", {{{"index", 1}}, {{"index", 1}}}}}),
       "gpus.devices[1].index"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<RegisterRequest> decoded = DecodeRegister(c.body);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(decoded.error().message().rfind(c.field, 0), 0u) << decoded.error().message();
  }
}

// The fuzzer's property (tests/fuzz/agent_protocol_fuzz.cc): what decodes encodes to a body
// that decodes and encodes to the same JSON, one-sided links and unsorted devices included.
TEST(RegisterGpusTest, EncodingADecodedBodyIsStable) {
  const json body = json::parse(R"({"name": "g1", "gpus": {"probe": "nvidia-smi", "error": "",
      "devices": [{"index": 3, "nvlink": [0, 0], "model": "", "numa": -1},
                  {"index": 0, "memory_mb": 0, "path": "/dev/nvidia0"}]}})");
  Result<RegisterRequest> decoded = DecodeRegister(body);
  ASSERT_TRUE(decoded) << decoded.error().message();
  const json first = EncodeRegister(*decoded);
  Result<RegisterRequest> again = DecodeRegister(first);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(EncodeRegister(*again), first);
}

TEST(RegisterGpusTest, ProbeStrings) {
  EXPECT_EQ(ToString(GpuProbe::kNvidiaSmi), "nvidia-smi");
  EXPECT_EQ(ToString(GpuProbe::kNoNvidiaSmi), "none");
  EXPECT_EQ(ToString(GpuProbe::kFailed), "failed");
}

}  // namespace
}  // namespace sluice::wire
