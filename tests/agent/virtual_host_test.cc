// VirtualHost (R-SCALE-1): timers, exit codes from the env, deduplicated launches, epoch
// fencing and self-fencing, with time passed in.
#include "agent/virtual_host.h"

#include <gtest/gtest.h>

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;

wire::Launch LaunchOf(int64_t job, std::map<std::string, std::string> env = {},
                      std::string command = "true") {
  return {.job = job, .command = std::move(command), .env = std::move(env), .account = "nobody"};
}

struct Fixture {
  VirtualHost host{"vh001", "instance"};
  TimePoint t0 = TimePoint() + 1000s;
  uint64_t seq = 0;

  Fixture() {
    EXPECT_TRUE(host.OnRegistered({.epoch = 3, .lease_seconds = 10, .heartbeat_ms = 500}, t0));
  }
  // One exchange at `now`: the heartbeat, then `reply` (epoch 3 unless set).
  wire::HeartbeatRequest Exchange(TimePoint now, wire::HeartbeatReply reply = {.epoch = 3}) {
    host.Tick(now);
    wire::HeartbeatRequest sent = host.Heartbeat(seq);
    host.OnReply(reply, seq, now, now);
    return sent;
  }
};

TEST(VirtualRunTest, RuntimeAndExitComeFromTheEnvOrASleepCommand) {
  struct Case {
    std::string_view name;
    wire::Launch launch;
    std::chrono::milliseconds runtime;
    int exit_code;
  };
  const Case cases[] = {
      {"default", LaunchOf(1), 0ms, 0},
      {"env runtime", LaunchOf(1, {{"SLUICE_VIRTUAL_RUNTIME", "2.5"}}), 2500ms, 0},
      {"env exit", LaunchOf(1, {{"SLUICE_VIRTUAL_EXIT", "3"}}), 0ms, 3},
      {"bad exit", LaunchOf(1, {{"SLUICE_VIRTUAL_EXIT", "x"}}), 0ms, 255},
      {"bad runtime", LaunchOf(1, {{"SLUICE_VIRTUAL_RUNTIME", "-4"}}), 0ms, 0},
      {"sleep command", LaunchOf(1, {}, "sleep 7"), 7000ms, 0},
      {"exec sleep", LaunchOf(1, {}, "exec sleep 2s"), 2000ms, 0},
      {"sleep and more", LaunchOf(1, {}, "sleep 7; false"), 0ms, 0},
      {"env wins", LaunchOf(1, {{"SLUICE_VIRTUAL_RUNTIME", "1"}}, "sleep 9"), 1000ms, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const VirtualRun run = VirtualRunOf(c.launch);
    EXPECT_EQ(run.runtime, c.runtime);
    EXPECT_EQ(run.exit_code, c.exit_code);
  }
  wire::Launch argv = LaunchOf(1);
  argv.argv = {"/bin/sleep", "4"};
  EXPECT_EQ(VirtualRunOf(argv).runtime, 4000ms);
}

TEST(VirtualHostTest, AJobEndsOnItsTimerWithItsExitCodeUntilAcknowledged) {
  Fixture f;
  f.Exchange(
      f.t0,
      {.epoch = 3,
       .launch = {LaunchOf(7, {{"SLUICE_VIRTUAL_RUNTIME", "5"}, {"SLUICE_VIRTUAL_EXIT", "2"}})}});
  EXPECT_TRUE(f.host.IsRunning(7));
  EXPECT_TRUE(f.host.HasNews());  // the start is reported at once
  EXPECT_EQ(f.host.NextTimer(), f.t0 + 5s);
  wire::HeartbeatRequest running = f.Exchange(f.t0 + 4s);
  EXPECT_EQ(running.running, std::set<int64_t>{7});
  EXPECT_TRUE(running.exited.empty());
  wire::HeartbeatRequest ended = f.Exchange(f.t0 + 5s);
  ASSERT_EQ(ended.exited.size(), 1u);
  EXPECT_EQ(ended.exited[0].exit_code, 2);
  EXPECT_TRUE(ended.running.empty());
  // Not acknowledged: said again; acknowledged: gone.
  EXPECT_EQ(f.Exchange(f.t0 + 6s, {.epoch = 3, .ack = {7}}).exited.size(), 1u);
  EXPECT_TRUE(f.Exchange(f.t0 + 7s).exited.empty());
  EXPECT_EQ(f.host.started(), 1);
  EXPECT_EQ(f.host.ended(), 1);
}

TEST(VirtualHostTest, ALaunchIsNeverRunTwice) {
  Fixture f;
  const wire::HeartbeatReply launch{.epoch = 3, .launch = {LaunchOf(7)}};
  f.Exchange(f.t0, launch);       // runs 0 s: ends at the next tick
  f.Exchange(f.t0 + 1s, launch);  // the repeat while the end is unacknowledged is dropped
  f.Exchange(f.t0 + 2s, {.epoch = 3, .ack = {7}});
  // A delayed repeat answering a request sent before the acknowledgement: dropped.
  f.host.Tick(f.t0 + 3s);
  f.host.OnReply(launch, f.seq - 1, f.t0 + 3s, f.t0 + 3s);
  EXPECT_FALSE(f.host.IsRunning(7));
  EXPECT_EQ(f.host.started(), 1);
  // A new dispatch (a reply to a later request) may run it again.
  f.Exchange(f.t0 + 4s, launch);
  EXPECT_EQ(f.host.started(), 2);
}

TEST(VirtualHostTest, AStaleEpochIsIgnoredWhole) {
  Fixture f;
  f.host.Tick(f.t0);
  uint64_t seq = 0;
  f.host.Heartbeat(seq);
  EXPECT_FALSE(f.host.OnReply({.epoch = 2, .launch = {LaunchOf(7)}}, seq, f.t0, f.t0));
  EXPECT_FALSE(f.host.IsRunning(7));
  EXPECT_FALSE(f.host.OnRegistered({.epoch = 1}, f.t0));
  EXPECT_EQ(f.host.highest_epoch(), 3u);
}

TEST(VirtualHostTest, KillsAndRunLimitsEndJobsAsARunnerWould) {
  Fixture f;
  wire::Launch limited = LaunchOf(8, {{"SLUICE_VIRTUAL_RUNTIME", "100"}});
  limited.run_limit = 3s;
  f.Exchange(f.t0,
             {.epoch = 3, .launch = {LaunchOf(7, {{"SLUICE_VIRTUAL_RUNTIME", "100"}}), limited}});
  f.Exchange(f.t0 + 1s, {.epoch = 3, .kill = {{.job = 7, .grace_seconds = 10}}});
  wire::HeartbeatRequest killed = f.Exchange(f.t0 + 2s);
  ASSERT_EQ(killed.exited.size(), 1u);
  EXPECT_EQ(killed.exited[0].cause, wire::ExitCause::kKilled);
  EXPECT_EQ(killed.exited[0].signal, 15);
  wire::HeartbeatRequest limit = f.Exchange(f.t0 + 3s);
  ASSERT_EQ(limit.exited.size(), 2u);
  EXPECT_EQ(limit.exited[1].job, 8);
  EXPECT_EQ(limit.exited[1].cause, wire::ExitCause::kRunLimit);
}

TEST(VirtualHostTest, RunLimitOrdersMoveTheTimerFromTheJobsStart) {
  Fixture f;
  wire::Launch raised = LaunchOf(1, {{"SLUICE_VIRTUAL_RUNTIME", "100"}});
  raised.run_limit = 3s;
  wire::Launch lowered = LaunchOf(2, {{"SLUICE_VIRTUAL_RUNTIME", "5"}});
  wire::Launch lifted =
      LaunchOf(3, {{"SLUICE_VIRTUAL_RUNTIME", "6"}, {"SLUICE_VIRTUAL_EXIT", "4"}});
  lifted.run_limit = 2s;
  f.Exchange(f.t0, {.epoch = 3, .launch = {raised, lowered, lifted}});
  // At t0+1: job 1's limit becomes 10 s, job 2 gets 2 s, job 3 has none any more; an order for
  // a job this host does not run is ignored.
  f.Exchange(f.t0 + 1s, {.epoch = 3,
                         .run_limits = {{.job = 1, .run_limit_seconds = 10},
                                        {.job = 2, .run_limit_seconds = 2},
                                        {.job = 3, .run_limit_seconds = std::nullopt},
                                        {.job = 99, .run_limit_seconds = 1}}});
  wire::HeartbeatRequest at2 = f.Exchange(f.t0 + 2s);
  ASSERT_EQ(at2.exited.size(), 1u);
  EXPECT_EQ(at2.exited[0].job, 2);
  EXPECT_EQ(at2.exited[0].cause, wire::ExitCause::kRunLimit);
  EXPECT_TRUE(f.host.IsRunning(1));  // past its first limit (3 s)
  EXPECT_TRUE(f.host.IsRunning(3));  // past its first limit (2 s)
  wire::HeartbeatRequest at6 = f.Exchange(f.t0 + 6s);
  ASSERT_EQ(at6.exited.size(), 2u);
  EXPECT_EQ(at6.exited[1].job, 3);
  EXPECT_EQ(at6.exited[1].exit_code, 4);
  EXPECT_EQ(at6.exited[1].cause, wire::ExitCause::kExit);
  EXPECT_TRUE(f.host.IsRunning(1));
  wire::HeartbeatRequest at10 = f.Exchange(f.t0 + 10s);
  EXPECT_FALSE(f.host.IsRunning(1));
  ASSERT_EQ(at10.exited.size(), 3u);
  EXPECT_EQ(at10.exited[0].job, 1);
  EXPECT_EQ(at10.exited[0].cause, wire::ExitCause::kRunLimit);
  EXPECT_EQ(at10.exited[0].signal, 15);
  // A limit lowered below the time already run ends the job at the next tick.
  f.Exchange(f.t0 + 11s, {.epoch = 3, .launch = {LaunchOf(5, {{"SLUICE_VIRTUAL_RUNTIME", "50"}})}});
  f.Exchange(f.t0 + 20s, {.epoch = 3, .run_limits = {{.job = 5, .run_limit_seconds = 4}}});
  EXPECT_TRUE(f.host.IsRunning(5));
  f.host.Tick(f.t0 + 20s);
  EXPECT_FALSE(f.host.IsRunning(5));
}

TEST(VirtualHostTest, CutOffForTheLeaseItFencesItselfAndReportsLater) {
  Fixture f;
  f.Exchange(f.t0, {.epoch = 3, .launch = {LaunchOf(7, {{"SLUICE_VIRTUAL_RUNTIME", "100"}})}});
  f.host.Tick(f.t0 + 9s);
  EXPECT_TRUE(f.host.IsRunning(7));
  EXPECT_FALSE(f.host.fenced());
  f.host.Tick(f.t0 + 10s);  // the lease (10 s) from the last successful send
  EXPECT_TRUE(f.host.fenced());
  EXPECT_FALSE(f.host.IsRunning(7));
  wire::HeartbeatRequest report = f.Exchange(f.t0 + 11s);
  ASSERT_EQ(report.exited.size(), 1u);
  EXPECT_EQ(report.exited[0].signal, 9);
  EXPECT_FALSE(f.host.fenced());  // reachable again
}

TEST(VirtualHostTest, ALaunchWithoutAnAccountFails) {
  Fixture f;
  wire::Launch launch = LaunchOf(7);
  launch.account.clear();
  f.Exchange(f.t0, {.epoch = 3, .launch = {launch}});
  EXPECT_FALSE(f.host.IsRunning(7));
  EXPECT_EQ(f.Exchange(f.t0 + 1s).launch_failed.size(), 1u);
}

}  // namespace
}  // namespace sluice::agent
