// Job objects written as text (wire/job_json.h): the listing's text is the documented job object,
// and a listing says the same as each job's detail.
#include "wire/job_json.h"

#include <gtest/gtest.h>

#include "server/controller_fixture.h"
#include "wire/reasons_json.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;

json Parse(const wire::JobListEntry& entry) {
  std::string text;
  wire::AppendJobText(entry, text);
  json j = json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

TEST(JobTextTest, ARunningJobIsTheDocumentedObject) {
  const json spec = {{"command", json::array({"sleep", "10"})},
                     {"name", "sim"},
                     {"min_tasks", 4},
                     {"max_tasks", 4},
                     {"resreq", "span[ptile=2]"},
                     {"run_limit", 600},
                     {"priority", 3},
                     {"project", "p"},
                     {"exclusive", false},
                     {"depend", ""},
                     {"begin", nullptr},
                     {"cwd", "/home/alice"},
                     {"output", "/home/alice/o.%j"},
                     {"error", ""}};
  const wire::JobListEntry entry{.fixed = wire::FixedJobText(spec),
                           .id = 7,
                           .user = "alice",
                           .account = "nobody",
                           .queue = "normal",
                           .state = "RUNNING",
                           .submit_time = 1764450000,
                           .start_time = 1764450001,
                           .tasks = 4,
                           .hosts = {{"h1", 2}, {"h2", 2}},
                           .dispatch_attempts = 1};
  const json want = {{"id", 7},
                     {"name", "sim"},
                     {"user", "alice"},
                     {"queue", "normal"},
                     {"state", "RUNNING"},
                     {"submit_time", 1764450000},
                     {"start_time", 1764450001},
                     {"end_time", nullptr},
                     {"exit_code", nullptr},
                     {"cause", nullptr},
                     {"reason", nullptr},
                     {"tasks", 4},
                     {"min_tasks", 4},
                     {"max_tasks", 4},
                     {"resreq", "span[ptile=2]"},
                     {"run_limit", 600},
                     {"priority", 3},
                     {"project", "p"},
                     {"exclusive", false},
                     {"depend", ""},
                     {"begin", nullptr},
                     {"command", "sleep 10"},
                     {"cwd", "/home/alice"},
                     {"output", "/home/alice/o.%j"},
                     {"error", ""},
                     {"hosts", {{{"name", "h1"}, {"slots", 2}}, {{"name", "h2"}, {"slots", 2}}}},
                     {"dispatch_attempts", 1},
                     {"account", "nobody"},
                     {"cpu_seconds", nullptr},
                     {"max_rss_mb", nullptr}};
  EXPECT_EQ(Parse(entry), want);
}

TEST(JobTextTest, EndedAndWaitingJobs) {
  const std::shared_ptr<const std::string> fixed = wire::FixedJobText({{"command", "true"}});
  wire::JobListEntry ended{.fixed = fixed,
                     .id = 3,
                     .state = "EXIT",
                     .submit_time = 5,
                     .start_time = 6,
                     .end_time = 9,
                     .exit_code = 137,
                     .cause = "HOST_LOST",
                     .tasks = 1,
                     .cpu_seconds = 1.235,
                     .max_rss_mb = 64.5,
                     .message = "launch failed on h1: cwd /nope"};
  json j = Parse(ended);
  EXPECT_EQ(j["cpu_seconds"], 1.235);
  EXPECT_EQ(j["max_rss_mb"], 64.5);
  EXPECT_EQ(j["exit_code"], 137);
  EXPECT_EQ(j["cause"], "HOST_LOST");
  EXPECT_EQ(j["end_time"], 9);
  EXPECT_EQ(j["message"], "launch failed on h1: cwd /nope");
  EXPECT_EQ(j["command"], "true");
  EXPECT_FALSE(j.contains("reasons"));
  ended.with_reasons = true;
  EXPECT_EQ(Parse(ended)["reasons"], nullptr);  // not waiting

  wire::JobListEntry waiting{
      .fixed = fixed, .id = 4, .state = "PENDING", .reason = "NEW_JOB", .with_reasons = true};
  EXPECT_EQ(Parse(waiting)["reasons"], json({{"main", "NEW_JOB"}, {"details", json::array()}}));
  core::PendingReasons reasons;
  reasons.Add({.code = core::ReasonCode::kNoResource,
               .resource = "slots",
               .needed = 8,
               .available = 3,
               .hosts = 2});
  waiting.reason = "NO_RESOURCE";
  waiting.reasons = reasons;
  const json r = Parse(waiting)["reasons"];
  EXPECT_EQ(r["main"], "NO_RESOURCE");
  ASSERT_EQ(r["details"].size(), 1u);
  EXPECT_EQ(r["details"][0]["code"], "NO_RESOURCE");
  EXPECT_EQ(r["details"][0]["needed"], 8);
  EXPECT_EQ(r["details"][0]["available"], 3);
  EXPECT_EQ(r, wire::ReasonsJson(reasons, "NO_RESOURCE"));
  waiting.hint = "needs 5 more slots";
  EXPECT_EQ(Parse(waiting)["reasons"],
            wire::ReasonsJson(reasons, "NO_RESOURCE", "needs 5 more slots"));
  EXPECT_EQ(Parse(waiting)["reasons"]["hint"], "needs 5 more slots");
}

TEST(JobTextTest, StringsAreEscaped) {
  const std::string odd = "a \"quoted\" \\ back\nline\ttab \x01 ctl é";
  const wire::JobListEntry entry{.fixed = wire::FixedJobText({{"command", odd}, {"name", odd}}),
                           .id = 1,
                           .user = odd,
                           .queue = odd,
                           .state = "DONE",
                           .message = odd};
  const json j = Parse(entry);
  for (const char* key : {"command", "name", "user", "queue", "message"}) {
    EXPECT_EQ(j[key], odd) << key;
  }
}

// `fields=` selects members, the fixed ones included, whatever their strings hold.
TEST(JobTextTest, FieldsSelectMembers) {
  const json spec = {{"command", "echo \"a,b\" \\\" , x"},
                     {"name", "n,\"1\""},
                     {"resreq", "select[a==1, b]"},
                     {"run_limit", 60}};
  wire::JobListEntry entry{.fixed = wire::FixedJobText(spec),
                     .id = 9,
                     .user = "u",
                     .queue = "q",
                     .state = "PENDING",
                     .reason = "NEW_JOB",
                     .tasks = 1};
  std::string full_text;
  wire::AppendJobText(entry, full_text);
  const json full = json::parse(full_text);
  for (const wire::JobFields& fields :
       {wire::JobFields{"id"}, wire::JobFields{"name"}, wire::JobFields{"command", "state"},
        wire::JobFields{"run_limit", "resreq", "name", "hosts", "reason"}, wire::JobFields{},
        wire::JobFields(wire::JobFieldNames().begin(), wire::JobFieldNames().end())}) {
    std::string text;
    wire::AppendJobText(entry, text, &fields);
    const json j = json::parse(text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << text;
    json want = json::object();
    for (const std::string& name : fields) {
      if (full.contains(name)) want[name] = full[name];
      if (name != "estimated_start") continue;
      // An unknown estimate brings why (docs/api.md, issue 17).
      for (const char* with : {"unknown_because", "reason_at_end", "waits_for"}) {
        if (full.contains(with)) want[with] = full[with];
      }
    }
    EXPECT_EQ(j, want) << text;
  }
  EXPECT_EQ(full["command"], spec["command"]);
  EXPECT_EQ(full["name"], spec["name"]);
  // Reasons asked for come whatever the fields.
  entry.with_reasons = true;
  std::string text;
  const wire::JobFields only_id{"id"};
  wire::AppendJobText(entry, text, &only_id);
  EXPECT_EQ(json::parse(text),
            json({{"id", 9}, {"reasons", {{"main", "NEW_JOB"}, {"details", json::array()}}}}));
}

// The listing (text written after the lock) and each job's detail (GET /v1/jobs/{id}) agree
// for jobs in every state.
TEST(JobTextTest, ListingAgreesWithDetailInEveryState) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  const JobId running = h.Submit("alice", {{"command", "sleep 1"}, {"tasks", 6}});
  const JobId done = h.Submit("bob", {{"command", "true"}, {"tasks", 1}, {"name", "quick"}});
  h.Cycle();
  for (const char* host : {"h1", "h2"})
    h.Heartbeat(host, json(testing::LaunchedIds(h.Heartbeat(host))));
  const JobId waiting = h.Submit("alice", {{"command", "x"}, {"tasks", 8}, {"queue", "bf"}});
  const JobId held = h.Submit("bob", {{"command", "y"}, {"hold", true}});
  const JobId cancelled = h.Submit("bob", {{"command", "z"}, {"tasks", 8}});
  const JobId fresh_id = h.Submit("alice", {{"command", "w"}, {"tasks", 8}});
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "bob"}, cancelled)).status, 200);
  h.Cycle();
  const json job_done = h.Job(done);
  ASSERT_EQ(job_done["state"], "RUNNING") << job_done;
  const std::string host = job_done["hosts"][0]["name"];
  h.Heartbeat(host,
              host == h.Job(running)["hosts"][0]["name"] ? json::array({running}) : json::array(),
              Exited(done));
  h.Cycle();
  const JobId unexplained = h.Submit("bob", {{"command", "v"}, {"tasks", 8}});

  const json list = Reply(h.c().ListJobs({{"pending_reasons", "1"}})).Json();
  ASSERT_TRUE(list.is_array()) << list;
  ASSERT_EQ(list.size(), 7u);
  std::map<std::string, int> states;
  for (const json& listed : list) {
    json detail = h.Job(listed["id"].get<JobId>());
    detail.erase("admission");  // and the members only the detail has (R-UX-4)
    detail.erase("script_bytes");
    if (detail["reasons"].is_object()) {
      for (const char* key : {"hosts", "headline", "text"}) detail["reasons"].erase(key);
    }
    EXPECT_EQ(listed, detail);
    states[listed["state"].get<std::string>()] += 1;
  }
  EXPECT_EQ(states,
            (std::map<std::string, int>{
                {"CANCELLED", 1}, {"DONE", 1}, {"HELD", 1}, {"PENDING", 3}, {"RUNNING", 1}}));
  EXPECT_EQ(h.Job(waiting)["reasons"]["main"], "NO_RESOURCE");
  EXPECT_EQ(h.Job(held)["reason"], "HELD");
  EXPECT_EQ(h.Job(unexplained)["reason"], "NEW_JOB");
  // Each waiting job's reasons carry what would let it start (core::Hint), listed or not.
  EXPECT_EQ(h.Job(held)["reasons"]["hint"],
            "released by `sluice release " + std::to_string(held) + "`");
  EXPECT_EQ(h.Job(unexplained)["reasons"]["hint"],
            "nothing: the next scheduling cycle considers it");
  const std::string hint = h.Job(waiting)["reasons"]["hint"];
  EXPECT_EQ(hint.rfind("needs ", 0), 0u) << hint;
  EXPECT_NE(hint.find("slots"), std::string::npos) << hint;
  EXPECT_FALSE(h.Job(running)["reasons"].is_object());
  EXPECT_EQ(h.Job(fresh_id)["reasons"]["details"].size(), 1u);
  // Without pending_reasons the objects have no `reasons` member.
  for (const json& listed : Reply(h.c().ListJobs({})).Json()) EXPECT_FALSE(listed.contains("reasons"));
  // Fields, filters and limit.
  const json brief = Reply(h.c().ListJobs({{"fields", "id,state,name"}})).Json();
  ASSERT_EQ(brief.size(), 7u);
  EXPECT_EQ(brief[1], json({{"id", done}, {"state", "DONE"}, {"name", "quick"}}));
  const Reply bad = h.c().ListJobs({{"fields", "id,colour"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["error"], "fields: no job field 'colour'");
  EXPECT_EQ(Reply(h.c().ListJobs({{"user", "bob"}, {"state", "pending,held"}})).Json().size(), 2u);
  // A user filter naming nobody is an error (issue 47.7: a typo listed nothing); a configured
  // user or an account of this host without jobs lists nothing.
  const Reply nobody_known = h.c().ListJobs({{"user", "bbo"}});
  EXPECT_EQ(nobody_known.status, 400);
  EXPECT_EQ(nobody_known.body["error"],
            "user: no user 'bbo' (not in auth.users, not an account of the controller's host); "
            "the configured users are alice, bob, root");
  EXPECT_TRUE(Reply(h.c().ListJobs({{"user", "root"}})).Json().empty());
  EXPECT_TRUE(Reply(h.c().ListJobs({{"user", "daemon"}})).Json().empty());
  const json last = Reply(h.c().ListJobs({{"limit", "2"}})).Json();
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[1]["id"], unexplained);
}

// R-LAUNCH-2: a job's stored steps (store::StoredJob::steps) are its object's `steps`, in the
// detail and the listing (server/views.cc copies the row's text into the listing's entry).
TEST(JobTextTest, StoredStepsAreTheJobObjectsSteps) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const JobId with_steps = h.Submit("alice", {{"command", "x"}, {"tasks", 8}});
  const JobId without = h.Submit("alice", {{"command", "y"}, {"tasks", 8}});
  h.Close();
  const json steps = json::parse(R"([{"step": 1, "host": "h1", "command": "hostname",
      "start_time": 1733380000, "end_time": 1733380005, "exit_code": 0, "signal": null,
      "cpu_seconds": 0.01, "max_rss_mb": 3.2, "state": "COMPLETED"}])");
  {  // as the step broker would have written them
    auto store = store::Store::Open(dir.path().string());
    ASSERT_TRUE(store) << store.error().ToString();
    auto snap = (*store)->Load();
    ASSERT_TRUE(snap) << snap.error().ToString();
    ASSERT_EQ(snap->jobs.size(), 2u);
    store::StoredJob row = snap->jobs[0];
    ASSERT_EQ(row.id, with_steps);
    row.steps = steps.dump();
    ASSERT_TRUE((*store)->WriteSync(store::WriteBatch{.jobs = {row}}).ok());
  }
  h.Open();
  EXPECT_EQ(h.Job(with_steps)["steps"], steps);
  EXPECT_FALSE(h.Job(without).contains("steps"));
  const json list = Reply(h.c().ListJobs({})).Json();
  ASSERT_EQ(list.size(), 2u);
  for (const json& job : list) {
    if (job["id"] == with_steps) {
      EXPECT_EQ(job["steps"], steps);
    } else {
      EXPECT_FALSE(job.contains("steps")) << job;
    }
  }
  const json only = Reply(h.c().ListJobs({{"fields", "id,steps"}})).Json();
  // Listed by id: the job with steps first.
  EXPECT_EQ(only, json::array({{{"id", with_steps}, {"steps", steps}}, {{"id", without}}}));
}

}  // namespace
}  // namespace sluice::server
