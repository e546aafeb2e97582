// Event cycles are paced (cycle_pacing.h; issue 21): a burst gathers for the debounce, a
// stream of events shares one cycle per gap, and a paced cycle still schedules every job
// that was submitted meanwhile.
#include "server/cycle_pacing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using ::sluice::testing::TempDir;
using std::chrono::milliseconds;
using testing::ControllerHarness;

TEST(CyclePacingTest, ALoneEventWaitsOnlyTheDebounce) {
  const SteadyTime woken = SteadyTime{} + std::chrono::seconds(100);
  const SteadyTime last_turn = woken - milliseconds(50);  // long ago
  EXPECT_EQ(EventCycleAt(woken, last_turn, milliseconds(2), milliseconds(10)),
            woken + milliseconds(2));
}

TEST(CyclePacingTest, EventsRightAfterACycleWaitForTheGap) {
  const SteadyTime last_turn = SteadyTime{} + std::chrono::seconds(100);
  const SteadyTime woken = last_turn + milliseconds(1);  // the next submission of a loop
  EXPECT_EQ(EventCycleAt(woken, last_turn, milliseconds(2), milliseconds(10)),
            last_turn + milliseconds(10));
}

// The scheduling thread (Controller::Start) runs paced cycles: single submissions in quick
// succession are all scheduled (ADMITTING) without a timer or anything else waking it.
TEST(CyclePacingTest, PacedCyclesStillScheduleEverySubmittedJob) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  h.c().Start();
  std::vector<JobId> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(h.Submit("alice", {{"command", "true"}}));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto all_started = [&] {
    for (JobId id : ids) {
      if (h.State(id) != "ADMITTING") return false;
    }
    return true;
  };
  while (!all_started() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  h.c().Stop();
  for (JobId id : ids) EXPECT_EQ(h.State(id), "ADMITTING") << "job " << id;
}

}  // namespace
}  // namespace sluice::server
