// LSF's brsvadd/brsvs and scontrol's reservation forms (R-COMPAT-1, R-RSV-1) read into
// `sluice rsv`'s options, the request bodies they make, and what brsvs and `scontrol show
// reservation` print.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "client/compat/lsf_rsv.h"
#include "client/compat/slurm_rsv.h"

namespace sluice::client::compat {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1796558400;  // 2026-12-06 12:00 UTC

class ReservationCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

json AddBody(const RsvFlags& flags) {
  Result<json> body = BuildRsvBody(flags, RsvBody::kAdd, kNow);
  EXPECT_TRUE(body.has_value()) << body.error().message();
  return body.has_value() ? *body : json();
}

TEST_F(ReservationCommandsTest, BrsvaddHostsUsersAndLsfTimes) {
  const std::vector<std::string> args = {"-N", "course", "-m", "h1 h[2-3]", "-u", "alice physics/",
                                         "-b", "15:00",  "-e", "12:6:17:30"};
  Result<BrsvaddRequest> r = ParseBrsvaddArgs(args, kNow, "Europe/Berlin");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(AddBody(r->flags), json::parse(R"({"name": "course", "hosts": ["h1", "h2", "h3"],
      "begin": 1796569200, "end": 1796578200, "users": ["alice"], "groups": ["physics"]})"));
  EXPECT_TRUE(r->warnings.empty());
}

TEST_F(ReservationCommandsTest, BrsvaddSlotsSystemAndWarnings) {
  const std::vector<std::string> args = {"-s",    "-n", "8",     "-R", "select[gpu]", "-b",
                                         "15:00", "-e", "17:00", "-d", "disk swap",   "-f"};
  Result<BrsvaddRequest> r = ParseBrsvaddArgs(args, kNow, "UTC");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  r->flags.name = "system_0";
  EXPECT_EQ(AddBody(r->flags), json::parse(R"({"name": "system_0", "slots": 8,
      "request": "select[gpu]", "begin": 1796569200, "end": 1796576400, "maint": true})"));
  EXPECT_EQ(r->warnings, (std::vector<std::string>{"-d ignored", "-f ignored"}));
  // -n beside -m: whole hosts, said in a warning.
  const std::vector<std::string> both = {"-m", "h1", "-n", "4", "-b", "15:00", "-e", "17:00"};
  r = ParseBrsvaddArgs(both, kNow, "UTC");
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->flags.slots.has_value());
  ASSERT_EQ(r->warnings.size(), 1u);
}

TEST_F(ReservationCommandsTest, BrsvaddRecurringWindowIsACronLine) {
  const std::vector<std::string> args = {"-N", "nightly", "-m", "h1", "-t", "22:00-6:30"};
  Result<BrsvaddRequest> r = ParseBrsvaddArgs(args, kNow, "Europe/Berlin");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(AddBody(r->flags), json::parse(R"({"name": "nightly", "hosts": ["h1"],
      "begin": 1796558400, "duration": 30600,
      "recur": {"cron": "0 22 * * *", "tz": "Europe/Berlin"}})"));
  EXPECT_EQ(*LsfWindowToCron("5:8:00-5:10:00"),
            (std::pair<std::string, int64_t>("0 8 * * 5", 7200)));
  EXPECT_EQ(*LsfWindowToCron("6:20:00-1:4:00"),
            (std::pair<std::string, int64_t>("0 20 * * 6", 32 * 3600)));  // over the weekend
  for (const std::string bad : {"8-8", "25:00-1:00", "5:8:00-9:00", "8", "7:1:00-7:2:00"}) {
    SCOPED_TRACE(bad);
    Result<std::pair<std::string, int64_t>> cron = LsfWindowToCron(bad);
    ASSERT_FALSE(cron.has_value());
    EXPECT_TRUE(cron.error().message().starts_with("-t " + bad + ": expected"));
  }
}

TEST_F(ReservationCommandsTest, BrsvaddRefusals) {
  struct Case {
    std::vector<std::string> args;
    StatusCode code;
  };
  const Case cases[] = {
      {{"-o", "-m", "h1"}, StatusCode::kFailedPrecondition},
      {{"-q", "normal"}, StatusCode::kFailedPrecondition},
      {{"-unit", "host", "-n", "2"}, StatusCode::kFailedPrecondition},
      {{"-Z"}, StatusCode::kInvalidArgument},
      {{"-m", "h1", "extra"}, StatusCode::kInvalidArgument},
      {{"-t", "nonsense"}, StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0]);
    Result<BrsvaddRequest> r = ParseBrsvaddArgs(c.args, kNow, "UTC");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), c.code);
  }
}

TEST_F(ReservationCommandsTest, NextRsvNameSkipsTakenNames) {
  const json list = json::parse(R"({"reservations": [{"name": "alice_0"}, {"name": "alice_1"}]})");
  EXPECT_EQ(NextRsvName(list, "alice"), "alice_2");
  EXPECT_EQ(NextRsvName(list, "bob"), "bob_0");
}

TEST_F(ReservationCommandsTest, BrsvsListsReservationsAsLsf) {
  const json list = json::parse(R"({"reservations": [
      {"name": "fix", "hosts": ["h1", "h2"], "slots": null, "users": [], "groups": [],
       "maint": true, "recur": null, "windows": [[1796569200, 1796576400]]},
      {"name": "course", "hosts": [], "slots": 8, "users": ["alice"], "groups": ["physics"],
       "maint": false, "recur": {"cron": "0 8 * * 1-5", "tz": "UTC"}, "windows": []}]})");
  EXPECT_EQ(FormatBrsvs(list, kNow),
            "RSVID   TYPE  USER            NCPUS  RSV_HOSTS  TIME_WINDOW\n"
            "fix     sys   -               -      h[1-2]     12/6/15/0-12/6/17/0\n"
            "course  user  alice,physics/  8      -          0 8 * * 1-5\n");
  EXPECT_EQ(FormatBrsvs(json::parse(R"({"reservations": []})"), kNow), "No reservation found\n");
}

TEST_F(ReservationCommandsTest, ScontrolCreateReservation) {
  const std::vector<std::string> words = {"ReservationName=maint", "StartTime=2026-12-06T15:00:00",
                                          "Duration=120",          "Nodes=h[1-2]",
                                          "Users=root,alice",      "Flags=MAINT,IGNORE_JOBS"};
  Result<RsvFlags> f = ParseScontrolReservation(words, kNow, "UTC");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  EXPECT_EQ(AddBody(*f), json::parse(R"({"name": "maint", "hosts": ["h1", "h2"],
      "begin": 1796569200, "duration": 7200, "users": ["root", "alice"], "maint": true,
      "ignore_jobs": true})"));
  // Slurm's now+N is in seconds unless a unit says otherwise; keys in any case.
  const std::vector<std::string> relative = {"reservationname=r", "starttime=now+90",
                                             "endtime=now+2hours", "corecnt=4"};
  f = ParseScontrolReservation(relative, kNow, "UTC");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  EXPECT_EQ(AddBody(*f), json::parse(R"({"name": "r", "slots": 4, "begin": 1796558490,
      "end": 1796565600})"));
}

TEST_F(ReservationCommandsTest, ScontrolDailyBecomesACronLineOfTheStartTime) {
  const std::vector<std::string> words = {
      "ReservationName=mornings", "StartTime=2026-12-07T08:00:00", "EndTime=2026-12-07T09:30:00",
      "Nodes=h1", "Flags=WEEKDAY"};
  Result<RsvFlags> f = ParseScontrolReservation(words, kNow, "Europe/Berlin");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  EXPECT_EQ(AddBody(*f), json::parse(R"({"name": "mornings", "hosts": ["h1"],
      "begin": 1796630400, "duration": 5400,
      "recur": {"cron": "0 8 * * mon-fri", "tz": "Europe/Berlin"}})"));
}

TEST_F(ReservationCommandsTest, ScontrolUpdateAndRefusals) {
  const std::vector<std::string> update = {"ReservationName=maint", "Flags=-MAINT",
                                           "EndTime=2026-12-06T18:00:00"};
  Result<RsvFlags> f = ParseScontrolReservation(update, kNow, "UTC");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  EXPECT_EQ(f->name, "maint");
  Result<json> body = BuildRsvBody(*f, RsvBody::kModify, kNow);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ(*body, json::parse(R"({"end": 1796580000, "maint": false})"));
  struct Case {
    std::string word;
    StatusCode code;
  };
  for (const Case& c : {Case{"Nodes=ALL", StatusCode::kFailedPrecondition},
                        Case{"NodeCnt=2", StatusCode::kFailedPrecondition},
                        Case{"Flags=FLEX", StatusCode::kFailedPrecondition},
                        Case{"Users=-bob", StatusCode::kFailedPrecondition},
                        Case{"PartitionName=gpu", StatusCode::kFailedPrecondition},
                        Case{"Bogus=1", StatusCode::kInvalidArgument},
                        Case{"StartTime=later", StatusCode::kInvalidArgument},
                        Case{"Duration=soon", StatusCode::kInvalidArgument},
                        Case{"nokey", StatusCode::kInvalidArgument}}) {
    SCOPED_TRACE(c.word);
    f = ParseScontrolReservation(std::vector<std::string>{c.word}, kNow, "UTC");
    ASSERT_FALSE(f.has_value());
    EXPECT_EQ(f.error().code(), c.code);
  }
}

TEST_F(ReservationCommandsTest, ScontrolShowReservationAsSlurm) {
  const json rsv = json::parse(R"({"name": "maint", "hosts": ["h1", "h2"], "slots": null,
      "users": ["root"], "groups": [], "maint": true, "ignore_jobs": false, "state": "waiting",
      "windows": [[1796569200, 1796576400]]})");
  EXPECT_EQ(ScontrolShowReservation(rsv, kNow),
            "ReservationName=maint StartTime=2026-12-06T15:00:00 EndTime=2026-12-06T17:00:00 "
            "Duration=02:00:00\n"
            "   Nodes=h[1-2] NodeCnt=2 CoreCnt=0 Features=(null) PartitionName=(null) "
            "Flags=MAINT,SPEC_NODES\n"
            "   TRES=(null)\n"
            "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
            "BurstBuffer=(null) Watts=n/a\n"
            "   MaxStartDelay=(null)\n\n");
}

}  // namespace
}  // namespace sluice::client::compat
