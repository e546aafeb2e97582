// `sluice rsv add|modify|preview` options -> the reservation API's bodies (R-RSV-1): hosts or
// slots with a request, times, users and groups, the flags, recurrence; and the refusals of
// option combinations that cannot make a reservation, each naming its options.
#include "client/rsv_request.h"

#include <gtest/gtest.h>

namespace sluice::client {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1796558400;  // 2026-12-06 12:00 UTC

TEST(BuildRsvBodyTest, HostsWithEveryOption) {
  RsvFlags f{.name = "maint-0412",
             .hosts = "h[1-2],gpu1",
             .begin = "2026-12-06T15:00Z",
             .duration = "2h",
             .users = "alice,bob",
             .groups = "physics",
             .maint = true,
             .ignore_jobs = true,
             .overrun = "10m"};
  Result<json> body = BuildRsvBody(f, RsvBody::kAdd, kNow);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ(*body, json::parse(R"({"name": "maint-0412", "hosts": ["h1", "h2", "gpu1"],
      "begin": 1796569200, "duration": 7200, "users": ["alice", "bob"], "groups": ["physics"],
      "maint": true, "ignore_jobs": true, "overrun": 600})"));
}

TEST(BuildRsvBodyTest, SlotsWithARequestAndAnEnd) {
  RsvFlags f{.name = "course",
             .slots = "16",
             .request = "select[gpu]",
             .begin = "now+1h",
             .end = "2026-12-06T17:00Z"};
  Result<json> body = BuildRsvBody(f, RsvBody::kAdd, kNow);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ(*body, json::parse(R"({"name": "course", "slots": 16, "request": "select[gpu]",
      "begin": 1796562000, "end": 1796576400})"));
}

TEST(BuildRsvBodyTest, RecurrenceWithItsZoneAndAnEndOfRecurrence) {
  RsvFlags f{.name = "mornings",
             .hosts = "h1",
             .begin = "2026-12-06T15:00Z",
             .end = "2027-01-31T00:00Z",
             .duration = "1h",
             .recur = "0 8 * * mon-fri",
             .tz = "Europe/Berlin"};
  Result<json> body = BuildRsvBody(f, RsvBody::kAdd, kNow);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ(*body, json::parse(R"({"name": "mornings", "hosts": ["h1"], "begin": 1796569200,
      "end": 1801353600, "duration": 3600,
      "recur": {"cron": "0 8 * * mon-fri", "tz": "Europe/Berlin"}})"));
}

TEST(BuildRsvBodyTest, ModifySendsOnlyWhatIsGivenAndCanTurnThingsOff) {
  RsvFlags f{.name = "course", .end = "2026-12-06T17:00Z", .maint = false, .recur = "none"};
  Result<json> body = BuildRsvBody(f, RsvBody::kModify, kNow);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ(*body, json::parse(R"({"end": 1796576400, "maint": false, "recur": null})"));
  Result<json> nothing = BuildRsvBody(RsvFlags{.name = "course"}, RsvBody::kModify, kNow);
  ASSERT_FALSE(nothing.has_value());
  EXPECT_EQ(nothing.error().code(), StatusCode::kInvalidArgument);
}

TEST(BuildRsvBodyTest, PreviewNeedsNoName) {
  RsvFlags f{.hosts = "h1", .begin = "2026-12-06T15:00Z", .duration = "30m", .maint = true};
  Result<json> body = BuildRsvBody(f, RsvBody::kPreview, kNow);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ(*body, json::parse(R"({"hosts": ["h1"], "begin": 1796569200, "duration": 1800,
      "maint": true})"));
  f.name = "fix";
  EXPECT_EQ(BuildRsvBody(f, RsvBody::kPreview, kNow)->value("name", ""), "fix");
}

TEST(BuildRsvBodyTest, RefusalsNameTheirOptions) {
  const RsvFlags base{.name = "r", .hosts = "h1", .begin = "2026-12-06T15:00Z", .duration = "1h"};
  struct Case {
    std::string_view name;
    RsvFlags flags;
    std::string_view starts;  // the message's start: the option it names
  };
  const auto with = [&](auto change) {
    RsvFlags f = base;
    change(f);
    return f;
  };
  const Case cases[] = {
      {"no place", with([](RsvFlags& f) { f.hosts.reset(); }), "-m HOSTS or -n SLOTS"},
      {"hosts and slots", with([](RsvFlags& f) { f.slots = "4"; }), "-m and -n"},
      {"request without slots", with([](RsvFlags& f) { f.request = "x"; }), "-R x: goes with -n"},
      {"bad slots", with([](RsvFlags& f) { f.hosts.reset(), f.slots = "0"; }), "-n 0: expected"},
      {"no begin", with([](RsvFlags& f) { f.begin.reset(); }), "-b BEGIN"},
      {"no end", with([](RsvFlags& f) { f.duration.reset(); }), "-e END or -d DURATION"},
      {"end and duration", with([](RsvFlags& f) { f.end = "2026-12-06T17:00Z"; }), "-e and -d"},
      {"end before begin",
       with([](RsvFlags& f) { f.duration.reset(), f.end = "2026-12-06T14:00Z"; }),
       "-e 2026-12-06T14:00Z: expected an end after the begin"},
      {"bad begin", with([](RsvFlags& f) { f.begin = "soon"; }), "-b soon: expected a time"},
      {"bad duration", with([](RsvFlags& f) { f.duration = "long"; }),
       "-d long: expected a duration"},
      {"bad overrun", with([](RsvFlags& f) { f.overrun = "x"; }),
       "--overrun x: expected a duration"},
      {"bad hosts", with([](RsvFlags& f) { f.hosts = "h[2-1]"; }), "-m h[2-1]: "},
      {"empty users", with([](RsvFlags& f) { f.users = ","; }), "-u ,: expected names"},
      {"tz without recur", with([](RsvFlags& f) { f.tz = "UTC"; }), "--tz UTC: goes with --recur"},
      {"recur of 4 fields", with([](RsvFlags& f) { f.recur = "0 8 * *", f.tz = "UTC"; }),
       "--recur '0 8 * *': expected a cron line of 5 fields"},
      {"recur without tz", with([](RsvFlags& f) { f.recur = "0 8 * * *"; }), "--recur: needs --tz"},
      {"recur without duration", with([](RsvFlags& f) {
         f.duration.reset(), f.end = "2027-01-01", f.recur = "0 8 * * *", f.tz = "UTC";
       }),
       "--recur: needs -d DURATION"},
      {"bad name", with([](RsvFlags& f) { f.name = "a b"; }), "NAME 'a b': expected a name"},
      {"no name", with([](RsvFlags& f) { f.name = ""; }), "NAME '': expected a name"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<json> body = BuildRsvBody(c.flags, RsvBody::kAdd, kNow);
    ASSERT_FALSE(body.has_value()) << body->dump();
    EXPECT_EQ(body.error().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(body.error().message().starts_with(c.starts)) << body.error().message();
  }
}

}  // namespace
}  // namespace sluice::client
