// The synthetic generator of `sluice bench` (src/sim/synthetic.h): seeded and deterministic,
// every shape is a valid request on its cluster, and the running jobs leave exactly the free
// slots asked for.
#include "sim/synthetic.h"

#include <gtest/gtest.h>

#include "core/cycle/scheduler.h"

namespace sluice::sim {
namespace {

SyntheticOptions Small(uint64_t seed) {
  return SyntheticOptions{.hosts = 50,
                          .pending = 2000,
                          .shapes = 60,
                          .queues = 3,
                          .users = 7,
                          .free_slots = 37,
                          .seed = seed};
}

core::ClusterState Build(const SyntheticOptions& options) {
  core::ClusterState state =
      std::move(core::ClusterState::Create(SyntheticCluster(options))).value();
  Result<JobId> next = FillRunning(options, state);
  EXPECT_TRUE(static_cast<bool>(next));
  EXPECT_TRUE(SubmitPending(options, SyntheticShapes(options), *next, state).ok());
  return state;
}

TEST(SyntheticTest, SameSeedSameClusterAndShapes) {
  const std::vector<SyntheticShape> a = SyntheticShapes(Small(5));
  const std::vector<SyntheticShape> b = SyntheticShapes(Small(5));
  ASSERT_EQ(a.size(), 60u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].resreq, b[i].resreq);
    EXPECT_EQ(a[i].min_tasks, b[i].min_tasks);
    EXPECT_EQ(a[i].max_tasks, b[i].max_tasks);
    EXPECT_EQ(a[i].exclusive, b[i].exclusive);
  }
  const core::ClusterConfig x = SyntheticCluster(Small(5));
  const core::ClusterConfig y = SyntheticCluster(Small(5));
  ASSERT_EQ(x.hosts.size(), 50u);
  for (size_t h = 0; h < x.hosts.size(); ++h) {
    EXPECT_EQ(x.hosts[h].slots, y.hosts[h].slots);
    EXPECT_EQ(x.hosts[h].attributes, y.hosts[h].attributes);
    EXPECT_EQ(x.hosts[h].resources, y.hosts[h].resources);
  }
  // Another seed draws another mix.
  bool differs = false;
  const std::vector<SyntheticShape> c = SyntheticShapes(Small(6));
  for (size_t i = 0; i < a.size(); ++i) differs = differs || a[i].resreq != c[i].resreq;
  EXPECT_TRUE(differs);
}

TEST(SyntheticTest, EveryShapeIsAValidRequestAndTheFreeSlotsAreAsAsked) {
  for (uint64_t seed : {1, 2, 3}) {
    const SyntheticOptions options = Small(seed);
    core::ClusterState state = Build(options);  // Submit fails on an invalid request
    EXPECT_EQ(state.topology().free_slots(), options.free_slots);
    int64_t pending = 0;
    for (const core::Queue& queue : state.topology().queues())
      pending += static_cast<int64_t>(queue.pending.size());
    EXPECT_EQ(pending, options.pending);
    // The core takes the workload. On 50 hosts a few shapes can never fit (a rack without
    // an ssd host, a model no host has); at the bench's 10,000 hosts none fail.
    core::CycleResult result = core::Scheduler().RunCycle(state, 10, {.explain = true});
    EXPECT_LT(result.stats.failed, options.pending / 10);
  }
}

TEST(SyntheticTest, ShapesCoverTheRequestLanguage) {
  SyntheticOptions options = Small(1);
  options.shapes = 400;
  bool select = false, rusage = false, span = false, ptile = false, same = false, order = false,
       compound = false, alternative = false, exclusive = false, range = false;
  for (const SyntheticShape& s : SyntheticShapes(options)) {
    select = select || s.resreq.find("select[") != std::string::npos;
    rusage = rusage || s.resreq.find("rusage[") != std::string::npos;
    span = span || s.resreq.find("span[hosts=1]") != std::string::npos;
    ptile = ptile || s.resreq.find("ptile=") != std::string::npos;
    same = same || s.resreq.find("same[") != std::string::npos;
    order = order || s.resreq.find("order[") != std::string::npos;
    compound = compound || s.resreq.find(" + ") != std::string::npos;
    alternative = alternative || s.resreq.find("||") != std::string::npos;
    exclusive = exclusive || s.exclusive;
    range = range || s.min_tasks < s.max_tasks;
  }
  EXPECT_TRUE(select && rusage && span && ptile && same && order && compound && alternative &&
              exclusive && range);
}

}  // namespace
}  // namespace sluice::sim
