// QueueLoads::Fill: a QueueLoads reused from an earlier cycle (the driver's CycleWorkspace) is
// what Compute returns for the new state, whatever it held: guarantees, maxima, runnable work,
// users' slots and active users, with queues added or gone.
#include "core/admission/queue_loads.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

void ExpectSame(const QueueLoads& got, const QueueLoads& want, size_t queues) {
  EXPECT_EQ(got.capacities(), want.capacities());
  for (QueueIndex q = 0; q < queues; ++q) {
    SCOPED_TRACE("queue " + std::to_string(q));
    EXPECT_EQ(got.of(q).guarantee, want.of(q).guarantee);
    EXPECT_EQ(got.of(q).maximum, want.of(q).maximum);
    EXPECT_EQ(got.of(q).runnable, want.of(q).runnable);
    EXPECT_EQ(got.of(q).user_slots, want.of(q).user_slots);
    EXPECT_EQ(got.of(q).active_users, want.of(q).active_users);
  }
}

// Two queues with a capacity and a user limit, users running and waiting in both.
ClusterState Busy() {
  ClusterState state = ClusterBuilder()
                           .Hosts(4, 2)
                           .Queue(QueueSpec{.name = "a", .capacity = 60, .user_limit_pct = 50})
                           .Queue(QueueSpec{.name = "b", .capacity = 40, .max_capacity = 80})
                           .State();
  SubmitRunning(state, JobBuilder(1).Tasks(2).Queue("a").User("ann"), 0);
  SubmitRunning(state, JobBuilder(2).Tasks(1).Queue("b").User("bob"), 0);
  Submit(state, JobBuilder(3).Tasks(1).Queue("a").User("cy"));
  Submit(state, JobBuilder(4).Tasks(1).Queue("b").User("dee"));
  return state;
}

TEST(QueueLoadsTest, FillOverAnEarlierCycleEqualsCompute) {
  const ClusterState busy = Busy();
  const ClusterState plain = ClusterBuilder().Hosts(2, 1).State();  // one queue, no limits
  QueueLoads reused = QueueLoads::Compute(busy, 10);
  ASSERT_TRUE(reused.capacities());
  ASSERT_FALSE(reused.of(0).active_users.empty());
  reused.Fill(plain, 20);
  ExpectSame(reused, QueueLoads::Compute(plain, 20), plain.topology().queues().size());
  reused.Fill(busy, 30);
  ExpectSame(reused, QueueLoads::Compute(busy, 30), busy.topology().queues().size());
}

}  // namespace
}  // namespace sluice::core
