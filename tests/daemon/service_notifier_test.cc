// ServiceNotifier (daemon/service_notifier.h) against a socket the test binds: what each call
// sends, that it reads and clears the environment, the keep-alive's spacing, and that without
// NOTIFY_SOCKET (or with a watchdog meant for another pid) it stays quiet.
#include "daemon/service_notifier.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "testing/notify_socket.h"

namespace sluice::daemon {
namespace {

using namespace std::chrono_literals;
using testing::NotifySocket;

// Sets the notify variables for one test and removes whatever is left of them after it.
class NotifyEnvironment {
 public:
  NotifyEnvironment(const std::string& socket, const std::string& usec, const std::string& pid) {
    if (!socket.empty()) setenv("NOTIFY_SOCKET", socket.c_str(), 1);
    if (!usec.empty()) setenv("WATCHDOG_USEC", usec.c_str(), 1);
    if (!pid.empty()) setenv("WATCHDOG_PID", pid.c_str(), 1);
  }
  ~NotifyEnvironment() {
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
  }
};

std::function<bool(const NotifySocket::Message&)> Field(const std::string& name,
                                                        const std::string& value) {
  return [=](const NotifySocket::Message& m) { return m.Has(name, value); };
}

TEST(ServiceNotifierTest, SendsEachStateWithItsStatusAndClearsTheEnvironment) {
  NotifySocket socket;
  ASSERT_TRUE(socket.ok());
  NotifyEnvironment env(socket.address(), "800000", std::to_string(getpid()));
  const std::unique_ptr<ServiceNotifier> notifier = ServiceNotifier::FromEnvironment();
  EXPECT_EQ(std::getenv("NOTIFY_SOCKET"), nullptr);
  EXPECT_EQ(std::getenv("WATCHDOG_USEC"), nullptr);
  EXPECT_EQ(std::getenv("WATCHDOG_PID"), nullptr);
  ASSERT_TRUE(notifier->enabled());
  EXPECT_TRUE(notifier->watchdog());
  EXPECT_EQ(notifier->KeepAliveEvery(), 200ms);

  notifier->Ready("serving");
  notifier->Status("serving");  // the same status again: nothing sent
  notifier->Status("2 jobs running");
  notifier->Reloading("reloading the configuration");
  notifier->Ready("serving again");
  notifier->Stopping("signal 15");
  ASSERT_TRUE(socket.WaitFor(Field("STOPPING", "1"), 10s)) << socket.Transcript();
  std::vector<std::map<std::string, std::string>> got;
  for (const NotifySocket::Message& m : socket.Messages()) got.push_back(m.fields);
  ASSERT_EQ(got.size(), 5u) << socket.Transcript();
  EXPECT_EQ(got[0], (std::map<std::string, std::string>{{"READY", "1"}, {"STATUS", "serving"}}));
  EXPECT_EQ(got[1], (std::map<std::string, std::string>{{"STATUS", "2 jobs running"}}));
  EXPECT_EQ(got[2].at("RELOADING"), "1");
  EXPECT_GT(std::stoll(got[2].at("MONOTONIC_USEC")), 0);
  EXPECT_EQ(got[2].at("STATUS"), "reloading the configuration");
  EXPECT_EQ(got[3],
            (std::map<std::string, std::string>{{"READY", "1"}, {"STATUS", "serving again"}}));
  EXPECT_EQ(got[4],
            (std::map<std::string, std::string>{{"STOPPING", "1"}, {"STATUS", "signal 15"}}));
}

TEST(ServiceNotifierTest, KeepAlivesAreSpacedByAnEighthOfTheInterval) {
  NotifySocket socket(/*abstract=*/true);
  ASSERT_TRUE(socket.ok());
  // 8 s: an eighth is 1 s, far longer than the calls below take even on a loaded machine.
  NotifyEnvironment env(socket.address(), "8000000", "");
  const std::unique_ptr<ServiceNotifier> notifier = ServiceNotifier::FromEnvironment();
  ASSERT_TRUE(notifier->watchdog());
  EXPECT_EQ(notifier->KeepAliveEvery(), 2000ms);
  for (int i = 0; i < 100; ++i) notifier->KeepAlive();
  notifier->Status("marker");
  ASSERT_TRUE(socket.WaitFor(Field("STATUS", "marker"), 10s)) << socket.Transcript();
  EXPECT_EQ(testing::KeepAliveTimes(socket.Messages()).size(), 1u) << socket.Transcript();
}

TEST(ServiceNotifierTest, AWatchdogMeantForAnotherProcessIsNotKeptAlive) {
  NotifySocket socket;
  ASSERT_TRUE(socket.ok());
  NotifyEnvironment env(socket.address(), "400000", "1");
  const std::unique_ptr<ServiceNotifier> notifier = ServiceNotifier::FromEnvironment();
  ASSERT_TRUE(notifier->enabled());
  EXPECT_FALSE(notifier->watchdog());
  EXPECT_EQ(notifier->KeepAliveEvery(), std::chrono::hours(24));
  notifier->KeepAlive();
  notifier->Ready("serving");
  ASSERT_TRUE(socket.WaitFor(Field("READY", "1"), 10s));
  EXPECT_TRUE(testing::KeepAliveTimes(socket.Messages()).empty()) << socket.Transcript();
}

TEST(ServiceNotifierTest, WithoutNotifySocketNothingIsSent) {
  NotifyEnvironment env("", "400000", "");
  const std::unique_ptr<ServiceNotifier> notifier = ServiceNotifier::FromEnvironment();
  EXPECT_FALSE(notifier->enabled());
  EXPECT_FALSE(notifier->watchdog());
  notifier->Ready("serving");  // no socket: nothing to check but that it returns
  notifier->KeepAlive();
  notifier->Stopping("done");
}

TEST(ServiceNotifierTest, AnUnusableSocketDisablesIt) {
  NotifyEnvironment env("vsock:2:99", "400000", "");
  EXPECT_FALSE(ServiceNotifier::FromEnvironment()->enabled());
}

}  // namespace
}  // namespace sluice::daemon
