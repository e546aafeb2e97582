// A job's GPUs on its host (R-GPU-3): the variables it gets, and a cgroup that lets it open
// its own device nodes and refuses the others'. No GPU here: the test stands devices in with
// mknod copies of /dev/zero, /dev/full, /dev/random and /dev/urandom as gpu0..gpu3.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "agent/gpu_env.h"
#include "agent/job_runner.h"
#include "agent/runner_waits.h"
#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

namespace fs = std::filesystem;
using sluice::testing::ReadFile;
using sluice::testing::TempDir;

TEST(GpuEnvTest, FencedJobsCountTheirDevicesFromZeroAndKeepTheHostIndexesAside) {
  std::map<std::string, std::string> fenced;
  AddGpuEnvironment({.gpus = {3, 1}}, /*fenced=*/true, fenced);
  EXPECT_EQ(fenced["SLUICE_GPUS"], "1,3");
  EXPECT_EQ(fenced["SLURM_JOB_GPUS"], "1,3");
  EXPECT_EQ(fenced["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(fenced["ROCR_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(fenced["HIP_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(fenced["GPU_DEVICE_ORDINAL"], "0,1");
  std::map<std::string, std::string> open{{"CUDA_VISIBLE_DEVICES", "7"}};
  AddGpuEnvironment({.gpus = {3, 1}}, /*fenced=*/false, open);
  EXPECT_EQ(open["CUDA_VISIBLE_DEVICES"], "1,3");  // the runtime sees every device
  EXPECT_FALSE(open.contains("SLUICE_GPU_MEM_MB"));  // whole devices: no share to keep to
  std::map<std::string, std::string> none{{"PATH", "/bin"}};
  AddGpuEnvironment({}, true, none);
  EXPECT_EQ(none.size(), 1u);
  std::map<std::string, std::string> shared;
  AddGpuEnvironment({.gpus = {2}, .mem_mb = 10240}, true, shared);
  EXPECT_EQ(shared["SLUICE_GPU_MEM_MB"], "10240");  // its share of each device's memory
  EXPECT_EQ(shared["CUDA_VISIBLE_DEVICES"], "0");
}

TEST(GpuEnvTest, TheOtherGpusAreDeniedAndDeviceNodesAreRead) {
  const std::map<int32_t, std::string> paths{
      {0, "/dev/nvidia0"}, {1, "/dev/nvidia1"}, {2, "/dev/nvidia2"}};
  EXPECT_EQ(DeniedGpuPaths({1}, paths), (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidia2"}));
  EXPECT_EQ(DeniedGpuPaths({}, paths).size(), 3u);
  Result<DeviceRule> null = DeviceRuleOf("/dev/null");
  ASSERT_TRUE(null.has_value()) << null.error().message();
  EXPECT_EQ(*null, (DeviceRule{.type = 'c', .major = 1, .minor = 3}));
  EXPECT_EQ(DeviceRuleOf("/dev/no-such-gpu").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(DeviceRuleOf("/etc/hostname").error().code(), StatusCode::kInvalidArgument);
}

// gpu0..gpu3: character devices 1:5 (zero), 1:7 (full), 1:8 (random), 1:9 (urandom).
bool StandInGpus(const fs::path& dir) {
  const unsigned minors[] = {5, 7, 8, 9};
  for (int i = 0; i < 4; ++i) {
    const std::string path = (dir / ("gpu" + std::to_string(i))).string();
    if (mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minors[i])) != 0) return false;
  }
  return true;
}

TEST(GpuFenceTest, AJobOpensItsOwnDevicesAndGetsEpermOnTheOthers) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (mknod, cgroups)";
  JobRunner runner(JobRunnerOptions{
      .host = "test",
      .cgroup = {.mode = CgroupMode::kAuto, .path = "sluice-gpu-" + std::to_string(getpid())}});
  ASSERT_TRUE(runner.Setup().ok());
  // v1: the devices controller; v2: the eBPF device program (cgroup_device_bpf_test.cc).
  if (runner.containment() == CgroupMode::kNone) GTEST_SKIP() << "no cgroups: " << runner.warning();
  TempDir dir;
  if (!StandInGpus(dir.path())) GTEST_SKIP() << "mknod refused in " << dir.path();
  std::map<int32_t, std::string> paths;
  for (int i = 0; i < 4; ++i) paths[i] = (dir.path() / ("gpu" + std::to_string(i))).string();
  const std::string probe =
      "for i in 0 1 2 3; do head -c1 gpu$i > /dev/null 2> err$i && echo \"$i ok\" || "
      "echo \"$i $(sed 's/.*: //' err$i)\"; done; "
      "echo \"SLUICE_GPUS=$SLUICE_GPUS CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"";
  JobSpec spec{.job = 41,
               .command = probe,
               .cwd = dir.path(),
               .output = (dir.path() / "out").string(),
               .gpus = {.gpus = {0, 2}, .gpu_paths = paths}};
  Status started = runner.Start(spec, Clock::now());
  ASSERT_TRUE(started.ok()) << started.message();
  auto exit = WaitExit(runner, 41);
  ASSERT_TRUE(exit);
  EXPECT_EQ(ReadFile(dir.path() / "out"),
            "0 ok\n1 Operation not permitted\n2 ok\n3 Operation not permitted\n"
            "SLUICE_GPUS=0,2 CUDA_VISIBLE_DEVICES=0,1\n");
  // Another job with the other two devices sees the mirror image.
  spec.job = 42;
  spec.gpus.gpus = {1, 3};
  spec.output = (dir.path() / "out2").string();
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitExit(runner, 42));
  EXPECT_EQ(ReadFile(dir.path() / "out2"),
            "0 Operation not permitted\n1 ok\n2 Operation not permitted\n3 ok\n"
            "SLUICE_GPUS=1,3 CUDA_VISIBLE_DEVICES=0,1\n");
}

}  // namespace
}  // namespace sluice::agent
