// What `sluice rsv list|show|preview`, `sluice hosts` and `jobs -l`/`-p` print about advance
// reservations (R-RSV-1, R-RSV-2), from JSON as the API sends it.
#include "client/rsv_format.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "client/format.h"
#include "client/job_long_format.h"

namespace sluice::client {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1796558400;  // 2026-12-06 12:00 UTC

// Times print in local time: these fixtures are read in UTC.
class RsvFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

const json kMaint = json::parse(R"({"name": "maint-0412", "hosts": ["h1", "h2", "h3"],
    "slots": null, "request": null, "begin": 1796569200, "end": 1796576400, "duration": 7200,
    "users": [], "groups": [], "maint": true, "ignore_jobs": true, "overrun": 0, "recur": null,
    "creator": "root", "created": 1796500000, "windows": [[1796569200, 1796576400]],
    "state": "waiting"})");

// Daily 08:00-09:00 UTC: today's window has ended, tomorrow's is next.
const json kMornings = json::parse(R"({"name": "mornings", "hosts": [], "slots": 8,
    "request": "select[gpu]", "begin": 1796544000, "end": null, "duration": 3600,
    "users": ["alice"], "groups": ["physics"], "maint": false, "ignore_jobs": false,
    "overrun": 600, "recur": {"cron": "0 8 * * *", "tz": "UTC"}, "creator": "root",
    "created": 1796500000, "state": "waiting",
    "windows": [[1796544000, 1796547600], [1796630400, 1796634000], [1796716800, 1796720400]]})");

TEST_F(RsvFormatTest, ListShowsWhereTheNextWindowWhoAndFlags) {
  const json list = {{"reservations", {kMaint, kMornings}}};
  EXPECT_EQ(FormatReservations(list, kNow),
            "NAME        STATE    WHERE                  WINDOW                         USERS      "
            "     FLAGS\n"
            "maint-0412  waiting  h[1-3]                 2026-12-06 15:00 - 17:00       -          "
            "     maint,ignore_jobs\n"
            "mornings    waiting  8 slots [select[gpu]]  2026-12-07 08:00 - 09:00 (+1)  "
            "alice,physics/  recur,overrun=10m\n");
  EXPECT_EQ(FormatReservations(json::parse(R"({"reservations": []})"), kNow), "No reservations\n");
  // A window over midnight shows the end's date.
  EXPECT_EQ(WindowText(1796569200, 1796569200 + 86400), "2026-12-06 15:00 - 2026-12-07 15:00");
  EXPECT_EQ(WindowText(1796569200, json()), "2026-12-06 15:00 - open");
}

TEST_F(RsvFormatTest, ShowPrintsEveryFieldAndTheNextWindows) {
  EXPECT_EQ(FormatReservationLong(kMaint, kNow),
            "Reservation maint-0412\n"
            "  State:          waiting\n"
            "  Hosts:          h[1-3] (3)\n"
            "  Begin:          2026-12-06 15:00:00 UTC\n"
            "  End:            2026-12-06 17:00:00 UTC\n"
            "  Duration:       2h\n"
            "  Users:          -\n"
            "  Groups:         -\n"
            "  Maintenance:    yes\n"
            "  Ignore jobs:    yes\n"
            "  Overrun:        -\n"
            "  Created:        2026-12-05 19:46:40 UTC by root\n"
            "  Next windows:\n"
            "    2026-12-06 15:00 - 17:00\n");
  const std::string mornings = FormatReservationLong(kMornings, kNow, 1);
  EXPECT_NE(mornings.find("  Slots:          8\n  Request:        select[gpu]\n"),
            std::string::npos)
      << mornings;
  EXPECT_NE(mornings.find("  Recurrence:     0 8 * * * (UTC)\n"), std::string::npos) << mornings;
  EXPECT_NE(mornings.find("  Users:          alice\n  Groups:         physics\n"),
            std::string::npos)
      << mornings;
  // The ended window is left out; one shown, one more counted.
  EXPECT_NE(mornings.find("  Next windows:\n    2026-12-07 08:00 - 09:00\n    ... 1 more\n"),
            std::string::npos)
      << mornings;
}

TEST_F(RsvFormatTest, PreviewListsTheJobsRunningIntoItAndTheJobsItDelays) {
  const json preview = json::parse(R"({"running": [{"id": 12, "user": "bob",
      "hosts": ["h1", "h2"], "end": 1796572800}], "delayed": [{"id": 14, "user": "carol",
      "estimated_start": 1796562000, "estimated_start_with": 1796576400}, {"id": 15,
      "user": "dave", "estimated_start": null, "estimated_start_with": null}]})");
  EXPECT_EQ(FormatRsvPreview(preview),
            "Running jobs that would run into the reservation (1):\n"
            "JOBID  USER  HOSTS   ENDS_BY\n"
            "12     bob   h[1-2]  2026-12-06 16:00:00 UTC\n"
            "Pending jobs it would delay (2):\n"
            "JOBID  USER   START_WITHOUT            START_WITH\n"
            "14     carol  2026-12-06 13:00:00 UTC  2026-12-06 17:00:00 UTC\n"
            "15     dave   -                        -\n");
  EXPECT_EQ(FormatRsvPreview(json::parse(R"({"running": [], "delayed": []})")),
            "No running job would run into the reservation.\n"
            "No pending job would be delayed.\n");
}

TEST_F(RsvFormatTest, HostsShowTheirReservationsInAColumnOnlyWhenOneHasAny) {
  const json hosts = json::parse(R"([{"name": "h1", "state": "ok", "slots": 4, "used_slots": 0,
      "running_jobs": 0, "agent": {"connected": true},
      "reservations": [{"name": "maint-0412", "begin": 1796569200, "end": 1796576400}]},
      {"name": "h2", "state": "ok", "slots": 4, "used_slots": 0, "running_jobs": 0,
      "agent": {"connected": true}, "reservations": []}])");
  EXPECT_EQ(FormatHosts(hosts),
            "HOST  STATE  SLOTS  USED  JOBS  AGENT      RESOURCES  RESERVATION\n"
            "h1    ok     4      0     0     connected  -          maint-0412 2026-12-06 15:00 - "
            "17:00\n"
            "h2    ok     4      0     0     connected  -          -\n");
  json plain = hosts;
  plain[0]["reservations"] = json::array();
  EXPECT_EQ(FormatHosts(plain).find("RESERVATION"), std::string::npos);
}

TEST_F(RsvFormatTest, JobsLongNamesTheJobsReservation) {
  const std::string text = FormatJobLong(json::parse(
      R"({"id": 7, "name": "n", "user": "alice", "queue": "normal", "reservation": "course"})"));
  EXPECT_NE(text.find("\n  Reservation:"), std::string::npos) << text;
  EXPECT_NE(text.find("course\n"), std::string::npos) << text;
  EXPECT_EQ(FormatJobLong(json::parse(R"({"id": 7})")).find("Reservation"), std::string::npos);
}

TEST_F(RsvFormatTest, PendingReasonsNameTheReservationItsHostsAndItsWindow) {
  const json jobs = json::parse(R"([{"id": 3, "user": "bob", "state": "PENDING",
      "reason": "HOST_RESERVED", "reasons": {"details": [
        {"code": "HOST_RESERVED", "hosts": 1, "scope": "reservation course", "time": 1796569200,
         "until": 1796576400, "host_names": "h[1-8]"},
        {"code": "RESERVATION_WAIT", "scope": "reservation course", "time": 1796569200,
         "until": 1796576400, "host_names": "h[1-8]"},
        {"code": "RESERVATION_WAIT", "scope": "reservation old", "time": null},
        {"code": "RESERVATION_DENIED", "scope": "reservation course"}]}}])");
  const std::string text = FormatPendingJobs(jobs, kNow);
  EXPECT_NE(text.find(" 1 host is kept by reservation course on h[1-8] from Dec 06 15:00:00 to "
                      "Dec 06 17:00:00, which the job would run into"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" The job's reservation course is closed until its window on h[1-8] from "
                      "Dec 06 15:00:00 to Dec 06 17:00:00\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" The job's user may not run jobs in reservation course\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" The job's reservation old has no window left\n"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace sluice::client
