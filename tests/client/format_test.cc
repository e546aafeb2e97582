// CLI text output from API JSON: job tables, `jobs -p` reasons rendered by the core's
// renderer from the detail JSON, hosts/queues/limits tables, and the HTTP -> Status mapping.
#include "client/format.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "client/rest_client.h"
#include "core/explain/render.h"
#include "wire/reasons_json.h"

namespace sluice::client {
namespace {

using nlohmann::json;

TEST(ReasonCodeFromStringTest, EveryCodeRoundTrips) {
  for (core::ReasonCode code : core::kAllReasonCodes) {
    EXPECT_EQ(wire::ReasonCodeFromString(core::ToString(code)), code);
  }
  EXPECT_FALSE(wire::ReasonCodeFromString("NOT_A_CODE").has_value());
}

TEST(ReasonDetailFromJsonTest, ReadsTheFieldsOfTheApi) {
  auto detail = wire::ReasonDetailFromJson(json::parse(
      R"({"code": "NO_RESOURCE", "resource": "slots", "needed": 8, "available": 3, "hosts": 2})"));
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->code, core::ReasonCode::kNoResource);
  EXPECT_EQ(detail->needed, 8);
  EXPECT_EQ(detail->available, 3);
  EXPECT_EQ(core::RenderReason(*detail), "Not enough job slots: needs 8, 3 free on 2 hosts");
  auto reserved =
      wire::ReasonDetailFromJson(json::parse(R"({"code": "RESERVED", "job": 4, "time": null})"));
  ASSERT_TRUE(reserved.has_value());
  EXPECT_EQ(reserved->time, kInfinite);
  EXPECT_FALSE(wire::ReasonDetailFromJson(json::parse(R"({"code": 3})")).has_value());
}

TEST(FormatJobsTest, AlignsColumnsAndShowsHosts) {
  const json jobs = json::parse(R"([
    {"id": 7, "user": "alice", "state": "RUNNING", "queue": "normal", "tasks": 4,
     "hosts": [{"name": "h1", "slots": 2}, {"name": "h2", "slots": 2}], "exit_code": null,
     "name": "sim", "submit_time": null},
    {"id": 12, "user": "bob", "state": "DONE", "queue": "short", "tasks": 1, "hosts": [],
     "exit_code": 0, "name": "", "submit_time": null}])");
  EXPECT_EQ(FormatJobs(jobs, 0),
            "JOBID  USER   STATE    ELAPSED  QUEUE   TASKS  HOSTS      EXIT  NAME  SUBMIT_TIME\n"
            "7      alice  RUNNING  -        normal  4      h1:2,h2:2  -     sim   -\n"
            "12     bob    DONE     -        short   1      -          0     -     -\n");
  EXPECT_EQ(FormatJobs(json::array(), 0), "No jobs found\n");
}

// Issue 47.7: the elapsed time of a running job runs to now, an ended one's to its end; -o
// prints the fields asked for, ids and times readable.
TEST(FormatJobsTest, ElapsedTimeAndChosenFields) {
  const json running = {{"id", 7}, {"state", "RUNNING"}, {"start_time", 1000}, {"end_time", nullptr}};
  EXPECT_EQ(ElapsedText(running, 1000 + 65), "1:05");
  EXPECT_EQ(ElapsedText(running, 1000 + 3 * 3600 + 7), "3:00:07");
  EXPECT_EQ(ElapsedText(running, 1000 + 2 * 86400 + 3600 + 61), "2-01:01:01");
  const json ended = {{"id", 8}, {"start_time", 1000}, {"end_time", 1059}};
  EXPECT_EQ(ElapsedText(ended, 999999), "0:59");
  EXPECT_EQ(ElapsedText(json{{"id", 9}, {"start_time", nullptr}}, 5000), "-");
  const json jobs = json::array(
      {{{"id", 12}, {"index", 3}, {"state", "RUNNING"},
        {"start_time", 1000}, {"hosts", json::array({{{"name", "h1"}, {"slots", 2}}})}},
       {{"id", 13}, {"state", "PENDING"}, {"name", "wait"}}});
  EXPECT_EQ(FormatJobFields(jobs, {"id", "state", "elapsed", "hosts", "name"}, 1010),
            "ID     STATE    ELAPSED  HOSTS  NAME\n"
            "12[3]  RUNNING  0:10     h1:2   -\n"
            "13     PENDING  -        -      wait\n");
}

// R-SEC-3: a job killed at its memory limit says so, with the limit and the peak.
TEST(FormatJobsTest, AnExitJobsMessageFollowsTheTable) {
  const json jobs = json::parse(R"json([
    {"id": 9, "user": "alice", "state": "EXIT", "queue": "normal", "tasks": 1, "hosts": [],
     "exit_code": 137, "name": "", "submit_time": null, "cause": "MEM_LIMIT",
     "message": "memory limit 64 MB reached (peak 64 MB, 1 process killed by the OOM killer)"},
    {"id": 10, "user": "alice", "state": "DONE", "queue": "normal", "tasks": 1, "hosts": [],
     "exit_code": 0, "name": "", "submit_time": null, "message": "launch failed on h1: x"}])json");
  const std::string text = FormatJobs(jobs, 0);
  EXPECT_TRUE(
      text.ends_with("\nJob 9 MEM_LIMIT: memory limit 64 MB reached (peak 64 MB, 1 "
                     "process killed by the OOM killer)\n"))
      << text;
  EXPECT_EQ(text.find("Job 10"), std::string::npos) << text;
}

TEST(FormatPendingJobsTest, EachReasonListIsFollowedByItsHint) {
  const json jobs = json::parse(R"([
    {"id": 2, "state": "PENDING", "reason": "NO_RESOURCE", "reasons": {"main": "NO_RESOURCE",
     "details": [{"code": "NO_RESOURCE", "resource": "slots", "needed": 8, "available": 3,
                  "hosts": 2}],
     "hint": "needs 5 more slots — starts when running jobs free them"}},
    {"id": 3, "state": "PENDING", "reason": "PRIORITY_WAIT"}])");
  const std::string text = FormatPendingJobs(jobs, 0);
  EXPECT_NE(text.find(" Not enough job slots: needs 8, 3 free on 2 hosts\n"
                      " What would let it start: needs 5 more slots — starts when running jobs "
                      "free them\n"),
            std::string::npos)
      << text;
  // No hint from the server: no hint line.
  EXPECT_EQ(text.find("What would let it start", text.find("\n3 ")), std::string::npos) << text;
}

TEST(FormatPendingJobsTest, ListsReasonsOfPendingJobsOnly) {
  const json jobs = json::parse(R"([
    {"id": 1, "state": "RUNNING"},
    {"id": 2, "user": "alice", "state": "PENDING", "queue": "normal", "tasks": 8,
     "reason": "NO_RESOURCE", "reasons": {"main": "NO_RESOURCE", "details": [
       {"code": "NO_RESOURCE", "resource": "slots", "needed": 8, "available": 3, "hosts": 2}]}},
    {"id": 3, "state": "HELD", "reason": "HELD"}])");
  const std::string text = FormatPendingJobs(jobs, 0);
  EXPECT_EQ(text.find("RUNNING"), std::string::npos);
  EXPECT_NE(text.find("PENDING REASONS:\n Not enough job slots: needs 8, 3 free on 2 hosts\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" " + std::string(core::Headline(core::ReasonCode::kHeld)) + "\n"),
            std::string::npos)
      << text;
}

// `sluice jobs` fetches only kTableJobFields: the tables must read nothing else.
TEST(FormatJobsTest, TheTablesReadOnlyTheFieldsTheyFetch) {
  const json full = json::parse(R"([
    {"id": 7, "name": "sim", "user": "alice", "queue": "normal", "state": "PENDING",
     "submit_time": 1764450000, "start_time": null, "end_time": null, "exit_code": null,
     "cause": null, "reason": "NO_RESOURCE", "tasks": 4, "min_tasks": 4, "max_tasks": 4,
     "resreq": "", "run_limit": 600, "priority": 0, "project": "", "exclusive": false,
     "depend": "", "begin": null, "command": "sleep 10", "cwd": "/", "output": "", "error": "",
     "hosts": [], "dispatch_attempts": 0,
     "reasons": {"main": "NO_RESOURCE", "details": [{"code": "NO_RESOURCE", "resource": "slots",
                 "needed": 4, "available": 1, "hosts": 2}]}},
    {"id": 8, "name": "", "user": "bob", "queue": "normal", "state": "DONE",
     "submit_time": 1764450001, "start_time": 1764450002, "end_time": 1764450003,
     "exit_code": 0, "cause": null, "reason": null, "tasks": 2, "min_tasks": 2, "max_tasks": 2,
     "resreq": "", "run_limit": null, "priority": 0, "project": "", "exclusive": false,
     "depend": "", "begin": null, "command": "true", "cwd": "/", "output": "", "error": "",
     "hosts": [{"name": "h1", "slots": 2}], "dispatch_attempts": 1, "reasons": null}])");
  std::set<std::string> fetched;
  std::stringstream list(kTableJobFields);
  for (std::string name; std::getline(list, name, ',');) fetched.insert(name);
  fetched.insert("reasons");  // pending_reasons=1 adds it whatever the fields
  json brief = json::array();
  for (const json& job : full) {
    json b = json::object();
    for (const auto& [key, value] : job.items()) {
      if (fetched.contains(key)) b[key] = value;
    }
    brief.push_back(b);
  }
  EXPECT_EQ(FormatJobs(brief, 0), FormatJobs(full, 0));
  EXPECT_EQ(FormatPendingJobs(brief, 0), FormatPendingJobs(full, 0));
}

TEST(FormatTablesTest, HostsQueuesLimits) {
  EXPECT_EQ(FormatHosts(json::parse(R"([{"name": "h1", "state": "ok", "slots": 16,
      "used_slots": 4, "running_jobs": 2, "resources": {"mem": 64000},
      "agent": {"connected": true}}])")),
            "HOST  STATE  SLOTS  USED  JOBS  AGENT      RESOURCES\n"
            "h1    ok     16     4     2     connected  mem=64000\n");
  EXPECT_EQ(FormatQueues(json::parse(R"([{"name": "normal", "priority": 0, "policy": "fifo",
      "open": true, "active": false, "pending": 3, "held": 0, "running": 5, "used_slots": 20}])")),
            "QUEUE   PRIO  POLICY  STATUS      PEND  HELD  RUN  SLOTS\n"
            "normal  0     fifo    Open:Inact  3     0     5    20\n");
  EXPECT_EQ(FormatLimits(json::parse(R"([{"name": "lic", "slots": 10, "jobs": null,
      "resources": {}, "users": {"per_each": true, "names": []}, "queues": null}])")),
            "LIMIT  SLOTS  JOBS  RESOURCES  SCOPE\n"
            "lic    10     -     -          per_users=all\n");
}

TEST(StatusForHttpTest, MapsStatusesAndExitCodes) {
  EXPECT_EQ(StatusForHttp(400, "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusForHttp(401, "x").code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusForHttp(403, "x").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusForHttp(404, "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(StatusForHttp(409, "x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(StatusForHttp(500, "x").code(), StatusCode::kInternal);
  EXPECT_EQ(ExitCodeFor(StatusForHttp(400, "x")), 2);
  // 422: a job that could never run (refused at submission, or by `modify`): exit 2.
  EXPECT_EQ(StatusForHttp(422, "x").code(), StatusCode::kOutOfRange);
  EXPECT_EQ(ExitCodeFor(StatusForHttp(422, "x")), 2);
  EXPECT_EQ(ExitCodeFor(StatusForHttp(403, "x")), 1);
  EXPECT_EQ(ExitCodeFor(Status(StatusCode::kUnavailable, "down")), 1);
}

TEST(ResolveClientOptionsTest, FlagsWinOverEnvironment) {
  setenv("SLUICE_SERVER", "http://env:1", 1);
  setenv("SLUICE_TOKEN", "env-token", 1);
  auto from_env = ResolveClientOptions("", "");
  ASSERT_TRUE(from_env.has_value());
  EXPECT_EQ(from_env->server, "http://env:1");
  EXPECT_EQ(from_env->token, "env-token");
  auto from_flags = ResolveClientOptions("127.0.0.1:5", "t");
  ASSERT_TRUE(from_flags.has_value());
  EXPECT_EQ(from_flags->server, "http://127.0.0.1:5");
  EXPECT_EQ(from_flags->token, "t");
  unsetenv("SLUICE_SERVER");
  unsetenv("SLUICE_TOKEN");
  EXPECT_FALSE(ResolveClientOptions("", "").has_value());
}

}  // namespace
}  // namespace sluice::client
