// GPUs on the wire (R-GPU-3): index lists for masks, and a job's devices on a host as a launch
// and a step order carry them, round-tripped and refused when malformed.
#include <gtest/gtest.h>

#include "wire/agent_protocol.h"
#include "wire/gpu_indexes.h"
#include "wire/step_stream.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

TEST(GpuIndexesTest, MasksBecomeIndexListsAndBack) {
  EXPECT_EQ(GpuIndexes(0b1010), json::array({1, 3}));
  EXPECT_EQ(GpuIndexes(0), json::array());
  EXPECT_EQ(GpuIndexes(uint64_t{1} << 63), json::array({63}));
  EXPECT_EQ(*GpuMaskOf(json::array({3, 1})), 0b1010u);
  for (const json& bad :
       {json(3), json::array({64}), json::array({-1}), json::array({1, 1}), json::array({"1"})}) {
    EXPECT_FALSE(GpuMaskOf(bad).has_value()) << bad.dump();
  }
}

TEST(GpuBindingTest, LaunchesAndStepOrdersCarryTheDevicesOfTheirHost) {
  const GpuBinding binding{.gpus = {0, 2},
                           .gpu_paths = {{0, "/dev/nvidia0"}, {1, "/dev/nvidia1"}, {2, "/dev/x"}},
                           .mem_mb = 4096};  // shared mode: the memory the job keeps to
  Launch launch{.job = 7, .command = "true"};
  launch.gpus = binding;
  Result<HeartbeatReply> decoded =
      DecodeHeartbeatReply({{"epoch", 1}, {"launch", json::array({EncodeLaunch(launch)})}});
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  ASSERT_EQ(decoded->launch.size(), 1u);
  EXPECT_EQ(decoded->launch[0].gpus, binding);
  StepOrder order{.job = 7, .step = 1, .command = "true"};
  order.gpus = binding;
  Result<StepOrder> step = DecodeStepOrder(EncodeStepOrder(order));
  ASSERT_TRUE(step.has_value()) << step.error().message();
  EXPECT_EQ(step->gpus, binding);
  // A host without GPUs sends neither key.
  const json plain = EncodeLaunch(Launch{.job = 7, .command = "true"});
  EXPECT_FALSE(plain.contains("gpus"));
  EXPECT_FALSE(plain.contains("gpu_paths"));
}

TEST(GpuBindingTest, MalformedBindingsAreRefusedNamingTheMember) {
  struct Case {
    json entry;
    std::string says;
  };
  const Case cases[] = {
      {{{"gpu_paths", {{"0", "dev/nvidia0"}}}}, "launch[0].gpu_paths.0"},
      {{{"gpu_paths", {{"64", "/dev/x"}}}}, "launch[0].gpu_paths.64"},
      {{{"gpu_paths", {{"a", "/dev/x"}}}}, "launch[0].gpu_paths.a"},
      {{{"gpu_paths", json::array()}}, "launch[0].gpu_paths"},
      {{{"gpu_paths", {{"0", "/dev/x"}}}, {"gpus", json::array({1})}}, "launch[0].gpus"},
      {{{"gpus", json::array({0})}}, "launch[0].gpus"},
      {{{"gpu_paths", {{"0", "/dev/x"}}}, {"gpus", "0"}}, "launch[0].gpus"},
      {{{"gpu_paths", {{"0", "/dev/x"}}}, {"gpus", json::array({0})}, {"gpu_mem_mb", 0}},
       "launch[0].gpu_mem_mb"},
      {{{"gpu_paths", {{"0", "/dev/x"}}}, {"gpu_mem_mb", 512}}, "launch[0].gpu_mem_mb"},
  };
  for (const Case& c : cases) {
    json entry = {{"job", 7}, {"command", "true"}};
    entry.update(c.entry);
    Result<HeartbeatReply> decoded =
        DecodeHeartbeatReply({{"epoch", 1}, {"launch", json::array({entry})}});
    ASSERT_FALSE(decoded.has_value()) << entry.dump();
    EXPECT_NE(decoded.error().message().find(c.says), std::string::npos)
        << decoded.error().message();
  }
}

}  // namespace
}  // namespace sluice::wire
