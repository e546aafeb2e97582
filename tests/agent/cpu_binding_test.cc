// Binding jobs to cores (issue 41, "CPUs too"; `sluice agent --bind-cpus`): the CPUs read from
// a fake /sys, the binder's choices (a whole core per slot, the GPUs' NUMA node first, packing,
// never a core to two jobs while free ones remain), and a real cpuset cgroup: a bound job's
// processes may run on its CPUs only.
#include "agent/cpu_binding.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "agent/cpu_topology.h"
#include "agent/job_runner.h"
#include "agent/runner_waits.h"
#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::agent {
namespace {

namespace fs = std::filesystem;
using sluice::testing::ReadFile;
using sluice::testing::TempDir;

void Write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text << "\n";
}

// 2 sockets x 2 cores x 2 threads, a NUMA node per socket, numbered as Linux does on x86:
// CPUs 0-3 are the first thread of each core, 4-7 their siblings.
fs::path FakeSys(const fs::path& root) {
  Write(root / "devices/system/cpu/online", "0-7");
  for (int cpu = 0; cpu < 8; ++cpu) {
    const fs::path topology = root / ("devices/system/cpu/cpu" + std::to_string(cpu)) / "topology";
    Write(topology / "physical_package_id", std::to_string((cpu % 4) / 2));
    Write(topology / "core_id", std::to_string(cpu % 2));
  }
  Write(root / "devices/system/node/node0/cpulist", "0-1,4-5");
  Write(root / "devices/system/node/node1/cpulist", "2-3,6-7");
  return root;
}

TEST(CpuTopologyTest, ReadsSocketsCoresAndNodesFromSys) {
  TempDir dir;
  Result<std::vector<LogicalCpu>> cpus = ReadCpuTopology(FakeSys(dir.path()).string());
  ASSERT_TRUE(cpus) << cpus.error().message();
  ASSERT_EQ(cpus->size(), 8u);
  EXPECT_EQ((*cpus)[6], (LogicalCpu{.cpu = 6, .socket = 1, .core = 0, .numa = 1}));
  EXPECT_EQ((*cpus)[1], (LogicalCpu{.cpu = 1, .socket = 0, .core = 1, .numa = 0}));
  EXPECT_EQ(DescribeCpus(*cpus), "2 sockets x 2 cores x 2 threads (8 CPUs, NUMA nodes 0-1)");
}

TEST(CpuTopologyTest, AMissingTopologyIsOneSocketOfSingleThreadCoresOnNodeZero) {
  TempDir dir;
  Write(dir.path() / "devices/system/cpu/online", "0-2");
  Result<std::vector<LogicalCpu>> cpus = ReadCpuTopology(dir.path().string());
  ASSERT_TRUE(cpus) << cpus.error().message();
  EXPECT_EQ(DescribeCpus(*cpus), "1 socket x 3 cores x 1 threads (3 CPUs, NUMA node 0)");
  EXPECT_EQ(ReadCpuTopology((dir.path() / "none").string()).error().code(), StatusCode::kNotFound);
}

TEST(CpuTopologyTest, CpuListsParseAndPrintAsTheKernelWritesThem) {
  Result<std::set<int32_t>> cpus = ParseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(cpus);
  EXPECT_EQ(*cpus, (std::set<int32_t>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(FormatCpuList(*cpus), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_TRUE(ParseCpuList("")->empty());
  for (const char* bad : {"a", "3-1", "1,,2", "-4", "1-", "70000", "0-99999"}) {
    Result<std::set<int32_t>> parsed = ParseCpuList(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().message().find("expected N or N-M"), std::string::npos) << bad;
  }
}

// GPUs 0 and 1 hang off NUMA nodes 0 and 1; GPU 2's node is unknown.
CpuBinder Binder(std::set<int32_t> allowed_mems = {}) {
  TempDir dir;
  return CpuBinder(*ReadCpuTopology(FakeSys(dir.path()).string()), {{0, 0}, {1, 1}, {2, -1}},
                   std::move(allowed_mems));
}

TEST(CpuBinderTest, ASlotIsAWholeCoreAndJobsPackOntoTheFullerSocket) {
  CpuBinder binder = Binder();
  EXPECT_EQ(binder.core_count(), 4);
  const CpuGrant first = binder.Bind(1, 1, {});
  EXPECT_EQ(first.cpus, (std::set<int32_t>{0, 4}));  // core 0 of socket 0, both threads
  EXPECT_EQ(first.mems, (std::set<int32_t>{0}));
  EXPECT_FALSE(first.shared);
  // The next 1-slot job fills socket 0, leaving socket 1 whole for a 2-slot job.
  EXPECT_EQ(binder.Bind(2, 1, {}).cpus, (std::set<int32_t>{1, 5}));
  EXPECT_EQ(binder.Bind(3, 2, {}).cpus, (std::set<int32_t>{2, 3, 6, 7}));
  EXPECT_EQ(binder.free_cores(), 0);
}

TEST(CpuBinderTest, AJobWithGpusGetsTheCoresOfTheirNumaNodeFirst) {
  CpuBinder binder = Binder();
  const CpuGrant near = binder.Bind(1, 1, /*gpus=*/{1});
  EXPECT_EQ(near.cpus, (std::set<int32_t>{2, 6}));
  EXPECT_EQ(near.mems, (std::set<int32_t>{1}));
  // Wider than the node: its two cores, then the other node's (GPU 2's node is unknown).
  const CpuGrant wide = binder.Bind(2, 2, {1, 2});
  EXPECT_EQ(wide.cpus, (std::set<int32_t>{3, 7, 0, 4}));
  EXPECT_EQ(wide.mems, (std::set<int32_t>{0, 1}));
}

// A job's memory nodes stay within the agent's: its cores' nodes there, else all of them
// (a node without memory).
TEST(CpuBinderTest, MemoryNodesStayWithinTheAgentsOwn) {
  CpuBinder binder = Binder(/*allowed_mems=*/{0});
  EXPECT_EQ(binder.Bind(1, 1, {1}).mems, (std::set<int32_t>{0}));  // node 1's core, no memory
  EXPECT_EQ(binder.Bind(2, 3, {}).mems, (std::set<int32_t>{0}));   // nodes 0 and 1's cores
}

TEST(CpuBinderTest, ReleasedCoresAreFreeAgainAndABoundJobKeepsItsCpus) {
  CpuBinder binder = Binder();
  const std::set<int32_t> cpus = binder.Bind(1, 2, {}).cpus;
  EXPECT_EQ(binder.Bind(1, 2, {}).cpus, cpus);  // a step group where the job is bound
  EXPECT_EQ(binder.free_cores(), 2);
  binder.Release(1);
  binder.Release(1);  // no-op
  EXPECT_EQ(binder.free_cores(), 4);
  EXPECT_EQ(binder.Bind(2, 2, {}).cpus, cpus);
}

TEST(CpuBinderTest, MoreSlotsThanFreeCoresShareTheLeastSharedCores) {
  CpuBinder binder = Binder();
  binder.Bind(1, 3, {});
  const CpuGrant over = binder.Bind(2, 2, {});
  EXPECT_TRUE(over.shared);
  EXPECT_EQ(over.cpus.size(), 4u);
  EXPECT_TRUE(over.cpus.contains(3) && over.cpus.contains(7));  // the free core first
  EXPECT_EQ(binder.Bind(3, 9, {}).cpus.size(), 8u);             // never more than the host
}

// Property: while the slots bound fit the cores, no core is given to two jobs, and every job
// gets exactly its slots' cores.
TEST(CpuBinderTest, RandomBindsAndReleasesNeverShareACoreWhileFreeOnesRemain) {
  CpuBinder binder = Binder();
  std::mt19937 rng(41);
  std::map<int64_t, std::set<int32_t>> bound;
  int32_t used = 0;
  for (int64_t job = 1; job < 2000; ++job) {
    if (!bound.empty() && (rng() % 2 == 0 || used == 4)) {
      auto victim = std::next(bound.begin(), rng() % bound.size());
      used -= static_cast<int32_t>(victim->second.size() / 2);
      binder.Release(victim->first);
      bound.erase(victim);
      continue;
    }
    const auto slots = static_cast<int32_t>(1 + rng() % (4 - used));
    const CpuGrant& grant = binder.Bind(job, slots, {static_cast<int32_t>(rng() % 3)});
    ASSERT_FALSE(grant.shared);
    ASSERT_EQ(grant.cpus.size(), static_cast<size_t>(2 * slots));
    for (const auto& [other, cpus] : bound) {
      for (int32_t cpu : grant.cpus) ASSERT_FALSE(cpus.contains(cpu)) << job << " " << other;
    }
    bound[job] = grant.cpus;
    used += slots;
    ASSERT_EQ(binder.free_cores(), 4 - used);
  }
}

// A real cpuset cgroup (v1 here, v2 where the tree offers cpuset): with --bind-cpus each job
// runs on the CPUs of its core only, as /proc/self/status shows them, and SLUICE_CPUS names
// them.
TEST(CpuBindingRunnerTest, BoundJobsRunOnTheirOwnCoresOnly) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (cgroups)";
  Result<std::vector<LogicalCpu>> cpus = ReadCpuTopology();
  if (!cpus || cpus->size() < 2) GTEST_SKIP() << "needs two CPUs";
  JobRunner runner(JobRunnerOptions{
      .host = "test",
      .cgroup = {.mode = CgroupMode::kAuto, .path = "sluice-cpus-" + std::to_string(getpid())},
      .bind_cpus = true});
  Status setup = runner.Setup();
  if (!setup.ok() && setup.message().find("cpuset") != std::string::npos) {
    GTEST_SKIP() << setup.message();
  }
  ASSERT_TRUE(setup.ok()) << setup.message();
  TempDir dir;
  const std::string probe =
      "sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status; echo \"$SLUICE_CPUS\"; "
      "while [ ! -e stop ]; do sleep 0.05; done";
  for (int64_t job : {1, 2}) {
    JobSpec spec{.job = job,
                 .command = probe,
                 .cwd = dir.path(),
                 .output = (dir.path() / ("out" + std::to_string(job))).string(),
                 .env = {{"SLUICE_CPUS", "a job's own value is replaced"}},
                 .cpu_limit = 1};
    Status started = runner.Start(spec, Clock::now());
    ASSERT_TRUE(started.ok()) << started.message();
  }
  // Both run at once, so each holds its core while the other is bound.
  for (int64_t job : {1, 2}) {
    const fs::path out = dir.path() / ("out" + std::to_string(job));
    ASSERT_TRUE(sluice::testing::Eventually([&] {
      const std::string text = ReadFile(out).value_or("");
      return std::count(text.begin(), text.end(), '\n') >= 2;
    })) << ReadFile(out).value_or("");
  }
  std::ofstream(dir.path() / "stop") << "";
  std::set<std::string> seen;
  for (int64_t job : {1, 2}) {
    ASSERT_TRUE(WaitExit(runner, job));
    std::istringstream out(ReadFile(dir.path() / ("out" + std::to_string(job))).value_or(""));
    std::string allowed;
    std::string named;
    std::getline(out, allowed);
    std::getline(out, named);
    EXPECT_EQ(allowed, named);
    Result<std::set<int32_t>> list = ParseCpuList(allowed);
    ASSERT_TRUE(list) << allowed;
    EXPECT_LT(list->size(), cpus->size()) << "job " << job << " sees every CPU: " << allowed;
    seen.insert(allowed);
  }
  EXPECT_EQ(seen.size(), 2u) << "both jobs were bound to the same core";
}

// Asked to bind CPUs, an agent that cannot (no cgroups, so no cpuset) refuses to start
// rather than run jobs unbound.
TEST(CpuBindingRunnerTest, WithoutCgroupsBindingCpusIsRefusedAtSetup) {
  JobRunner runner(
      JobRunnerOptions{.host = "test", .cgroup = {.mode = CgroupMode::kNone}, .bind_cpus = true});
  Status setup = runner.Setup();
  ASSERT_FALSE(setup.ok());
  EXPECT_NE(setup.message().find("--bind-cpus needs the cpuset cgroup controller"),
            std::string::npos)
      << setup.message();
}

}  // namespace
}  // namespace sluice::agent
