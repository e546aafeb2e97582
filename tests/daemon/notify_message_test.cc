// The notify protocol's text (daemon/notify_message.h): the datagrams a daemon sends, their
// parsing, and what NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID may hold.
#include "daemon/notify_message.h"

#include <gtest/gtest.h>
#include <sys/un.h>

#include <string>

namespace sluice::daemon {
namespace {

using std::chrono::microseconds;

TEST(NotifyMessageTest, AStatusWithNewlinesStaysOneAssignment) {
  EXPECT_EQ(StatusAssignment("leader: 3 hosts"), "STATUS=leader: 3 hosts");
  const std::string forged = StatusAssignment("ok\nREADY=1\r\nSTOPPING=1");
  EXPECT_EQ(forged, "STATUS=ok READY=1  STOPPING=1");
  EXPECT_EQ(ParseNotifyMessage(forged).size(), 1u);
}

TEST(NotifyMessageTest, AssignmentsJoinAndParseBack) {
  const std::string datagram = JoinAssignments({kReady, StatusAssignment("standby: a=b")});
  EXPECT_EQ(datagram, "READY=1\nSTATUS=standby: a=b");
  const std::map<std::string, std::string> fields = ParseNotifyMessage(datagram);
  EXPECT_EQ(fields,
            (std::map<std::string, std::string>{{"READY", "1"}, {"STATUS", "standby: a=b"}}));
}

TEST(NotifyMessageTest, ParsingSkipsLinesWithoutANameAndKeepsTheLastOfAName) {
  EXPECT_EQ(ParseNotifyMessage("junk\n=x\nSTATUS=a\nSTATUS=b\n"),
            (std::map<std::string, std::string>{{"STATUS", "b"}}));
  EXPECT_TRUE(ParseNotifyMessage("").empty());
}

TEST(NotifyMessageTest, ReloadingCarriesTheMonotonicTime) {
  EXPECT_EQ(
      ParseNotifyMessage(ReloadingMessage(1234567)),
      (std::map<std::string, std::string>{{"RELOADING", "1"}, {"MONOTONIC_USEC", "1234567"}}));
}

TEST(NotifyMessageTest, SocketAddresses) {
  struct Case {
    std::string_view name;
    std::string value;
    std::optional<std::string> path;  // nullopt: refused
  };
  const size_t capacity = sizeof(sockaddr_un{}.sun_path);
  const Case cases[] = {
      {"path", "/run/systemd/notify", "/run/systemd/notify"},
      {"abstract", "@sluice/notify", std::string("\0sluice/notify", 14)},
      {"empty", "", std::nullopt},
      {"relative", "run/notify", std::nullopt},
      {"vsock", "vsock:2:1234", std::nullopt},
      {"longest path", "/" + std::string(capacity - 2, 'a'), "/" + std::string(capacity - 2, 'a')},
      {"path too long", "/" + std::string(capacity - 1, 'a'), std::nullopt},
      {"longest abstract", "@" + std::string(capacity - 1, 'a'),
       std::string(1, '\0') + std::string(capacity - 1, 'a')},
      {"abstract too long", "@" + std::string(capacity, 'a'), std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<std::string> path = NotifySocketPath(c.value);
    ASSERT_EQ(path.has_value(), c.path.has_value());
    if (path) {
      EXPECT_EQ(*path, *c.path);
    } else {
      EXPECT_EQ(path.error().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(NotifyMessageTest, TheWatchdogIsOursWhenItsPidIsUnsetOrOurs) {
  struct Case {
    std::string_view name;
    const char* usec;
    const char* pid;
    std::optional<microseconds> interval;
    bool error = false;
  };
  const Case cases[] = {
      {"unset", nullptr, nullptr, std::nullopt},
      {"no pid", "30000000", nullptr, microseconds(30'000'000)},
      {"our pid", "400000", "4242", microseconds(400'000)},
      {"another pid", "400000", "1", std::nullopt},
      {"a pid alone", nullptr, "4242", std::nullopt},
      {"zero", "0", nullptr, std::nullopt, true},
      {"not a number", "30s", nullptr, std::nullopt, true},
      {"negative", "-5", nullptr, std::nullopt, true},
      {"bad pid", "400000", "me", std::nullopt, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<std::optional<microseconds>> interval = WatchdogInterval(c.usec, c.pid, 4242);
    ASSERT_EQ(!interval.has_value(), c.error);
    if (interval) {
      EXPECT_EQ(*interval, c.interval);
    } else {
      EXPECT_EQ(interval.error().code(), StatusCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace sluice::daemon
