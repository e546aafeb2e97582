// The REST layer on loopback (port 0, in-process): authentication (R-SRV-5), bad bodies,
// metric names (R-SRV-4), the state-directory lock, SSE.
#include "server/http_api.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "client/json_array_stream.h"
#include "client/rest_client.h"
#include "server/loopback_options.h"
#include "server/server.h"
#include "testing/subprocess.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;

constexpr const char* kConfig = R"(hosts:
  - {name: h1, slots: 4}
queues:
  - {name: normal}
  - {name: private, submit_users: [bob]}
auth:
  agent_token: agent-secret
  users:
    - {name: alice, token: alice-token}
    - {name: bob, token: bob-token}
    - {name: root, token: admin-token, admin: true}
)";

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_ = LoopbackOptions(dir_.path(), kConfig);
    auto server = Server::Start(options_);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10);
  }

  httplib::Result Post(const std::string& path, const std::string& body, const std::string& token) {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client_->Post(path.c_str(), headers, body, "application/json");
  }
  httplib::Result Get(const std::string& path, const std::string& token) {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client_->Get(path.c_str(), headers);
  }
  static std::string ErrorOf(const httplib::Result& r) {
    return json::parse(r->body).value("error", "");
  }

  TempDir dir_;
  ServerOptions options_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpApiTest, RequestsWithoutAValidTokenGet401) {
  auto r = Post("/v1/jobs", R"({"command":"true"})", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(ErrorOf(r).find("token"), std::string::npos);
  EXPECT_EQ(Get("/v1/jobs", "wrong")->status, 401);
  EXPECT_EQ(Get("/v1/hosts", "alice-token")->status, 200);
  EXPECT_EQ(Get("/healthz", "")->status, 200);
}

TEST_F(HttpApiTest, UsersActOnTheirOwnJobsOnly) {
  auto r = Post("/v1/jobs", R"({"command":"true","tasks":2})", "alice-token");
  ASSERT_EQ(r->status, 201) << r->body;
  const JobId id = json::parse(r->body)["id"];
  const std::string cancel = "/v1/jobs/" + std::to_string(id) + "/cancel";
  auto refused = Post(cancel, "", "bob-token");
  EXPECT_EQ(refused->status, 403);
  EXPECT_NE(ErrorOf(refused).find("alice"), std::string::npos);
  EXPECT_EQ(Post(cancel, "", "agent-secret")->status, 403);  // agents are not users
  EXPECT_EQ(Post(cancel, "", "admin-token")->status, 200);
  EXPECT_EQ(json::parse(Get("/v1/jobs/" + std::to_string(id), "bob-token")->body)["state"],
            "CANCELLED");
  // submit_users, admin-only actions, agent-only endpoints.
  EXPECT_EQ(Post("/v1/jobs", R"({"command":"x","queue":"private"})", "alice-token")->status, 403);
  EXPECT_EQ(Post("/v1/jobs", R"({"command":"x","queue":"private"})", "bob-token")->status, 201);
  EXPECT_EQ(Post("/v1/queues/normal/close", "", "alice-token")->status, 403);
  EXPECT_EQ(Post("/v1/hosts/h1/close", "", "admin-token")->status, 200);
  EXPECT_EQ(Post("/v1/admin/reconfigure", "", "bob-token")->status, 403);
  EXPECT_EQ(Post("/v1/admin/reconfigure", "", "admin-token")->status, 200);
  EXPECT_EQ(Post("/v1/agents/register", R"({"name":"h1"})", "alice-token")->status, 403);
}

TEST_F(HttpApiTest, BadBodiesGetA4xxSayingWhatAndWhere) {
  auto malformed = Post("/v1/jobs", R"({"command": "true",)", "alice-token");
  EXPECT_EQ(malformed->status, 400);
  EXPECT_NE(ErrorOf(malformed).find("malformed JSON at byte"), std::string::npos);
  auto unknown = Post("/v1/jobs", R"({"command":"true","colour":"red"})", "alice-token");
  EXPECT_EQ(unknown->status, 400);
  EXPECT_NE(ErrorOf(unknown).find("colour"), std::string::npos);
  auto resreq = Post("/v1/jobs", R"({"command":"true","resreq":"select[type=="})", "alice-token");
  EXPECT_EQ(resreq->status, 400);
  EXPECT_NE(ErrorOf(resreq).find("resreq"), std::string::npos);
  auto type = Post("/v1/jobs", R"({"command":"true","tasks":"four"})", "alice-token");
  EXPECT_EQ(type->status, 400);
  EXPECT_NE(ErrorOf(type).find("tasks"), std::string::npos);
  const std::string big = R"({"command":")" + std::string(kMaxBodyBytes, 'x') + R"("})";
  auto oversize = Post("/v1/jobs", big, "alice-token");
  EXPECT_EQ(oversize->status, 413);
  EXPECT_NE(ErrorOf(oversize).find("limit"), std::string::npos);
  auto batch = Post("/v1/jobs/batch", R"({"jobs":[{"command":"a"},{"command":1}]})", "alice-token");
  EXPECT_EQ(batch->status, 400);
  EXPECT_NE(ErrorOf(batch).find("jobs[1].command"), std::string::npos);
  EXPECT_EQ(Get("/v1/jobs/999", "alice-token")->status, 404);
  EXPECT_EQ(Get("/v1/nowhere", "alice-token")->status, 404);
  EXPECT_EQ(Get("/v1/jobs?colour=red", "alice-token")->status, 400);
  // Nothing above was accepted.
  EXPECT_EQ(json::parse(Get("/v1/jobs", "alice-token")->body).size(), 0u);
}

TEST_F(HttpApiTest, BatchSubmissionReturnsConsecutiveIdsAndListingFilters) {
  auto r = Post(
      "/v1/jobs/batch",
      R"({"jobs":[{"command":"a"},{"command":["echo","b"],"queue":"normal"},{"command":"c","hold":true}]})",
      "alice-token");
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(json::parse(r->body)["ids"], json::array({1, 2, 3}));
  json held = json::parse(Get("/v1/jobs?state=held", "alice-token")->body);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]["id"], 3);
  EXPECT_EQ(held[0]["reason"], "HELD");
  json mine = json::parse(Get("/v1/jobs?user=bob", "alice-token")->body);
  EXPECT_TRUE(mine.empty());
  // LSF's and Slurm's state names filter too; a bogus state or queue is a 400 naming the valid
  // ones (issue 47.7: it listed nothing).
  EXPECT_EQ(json::parse(Get("/v1/jobs?state=PEND,PSUSP", "alice-token")->body).size(), 3u);
  EXPECT_EQ(json::parse(Get("/v1/jobs?state=PD", "alice-token")->body).size(), 2u);
  auto bogus = Get("/v1/jobs?state=bogus", "alice-token");
  EXPECT_EQ(bogus->status, 400);
  EXPECT_NE(bogus->body.find("PENDING, HELD"), std::string::npos) << bogus->body;
  auto nowhere = Get("/v1/jobs?queue=nosuchq", "alice-token");
  EXPECT_EQ(nowhere->status, 400);
  EXPECT_NE(nowhere->body.find("the queues are normal"), std::string::npos) << nowhere->body;
  json all = json::parse(Get("/v1/jobs?pending_reasons=1", "alice-token")->body);
  ASSERT_EQ(all.size(), 3u);
  for (const char* field : {"id", "state", "user", "queue", "submit_time", "start_time", "end_time",
                            "exit_code", "reason", "name", "tasks", "hosts", "cause"}) {
    EXPECT_TRUE(all[0].contains(field)) << field;
  }
  EXPECT_EQ(all[1]["command"], "echo b");
}

// Issue 45: the listing is an HTTP chunked reply (256 jobs a chunk) that parses whole, and the
// CLI's reader gets every job once, element by element; a bad query is still a 400.
TEST_F(HttpApiTest, ListingsAreStreamedAndReadBackOneJobAtATime) {
  std::string batch = R"({"jobs":[)";
  for (int i = 0; i < 600; ++i) batch += std::string(i ? "," : "") + R"({"command":"x"})";
  ASSERT_EQ(Post("/v1/jobs/batch", batch + "]}", "alice-token")->status, 201);
  auto listed = Get("/v1/jobs?fields=id,state", "alice-token");
  ASSERT_EQ(listed->status, 200);
  EXPECT_EQ(listed->get_header_value("Transfer-Encoding"), "chunked");
  std::vector<JobId> expected;
  for (JobId id = 1; id <= 600; ++id) expected.push_back(id);
  std::vector<JobId> ids;
  for (const json& job : json::parse(listed->body)) ids.push_back(job["id"]);
  EXPECT_EQ(ids, expected);

  client::RestClient rest(client::ClientOptions{
      .server = "http://127.0.0.1:" + std::to_string(server_->port()), .token = "alice-token"});
  ids.clear();
  Status read = client::ForEachElement(rest, "/v1/jobs?fields=id", [&](json job) {
    ids.push_back(job["id"]);
    return true;
  });
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(ids, expected);
  Status bad = client::ForEachElement(rest, "/v1/jobs?queue=nosuchq", [](json) { return true; });
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
}

TEST_F(HttpApiTest, MetricsUseTheNamesOfRSrv4) {
  ASSERT_EQ(Post("/v1/jobs", R"({"command":"true"})", "alice-token")->status, 201);
  auto r = Get("/metrics", "");
  ASSERT_EQ(r->status, 200);
  for (const char* name :
       {"sluice_jobs{state=\"PENDING\",queue=\"normal\"} 1", "sluice_pending_reasons{",
        "sluice_oldest_pending_age_seconds{queue=\"normal\"}",
        "sluice_gated_heads{queue=\"normal\"}", "sluice_unschedulable_total{queue=\"normal\"}",
        "sluice_admission_attempts_total{queue=\"normal\",outcome=\"admitted\"}",
        "sluice_backfilled_admissions_total{queue=\"normal\"}",
        "# TYPE sluice_cycle_duration_seconds histogram",
        "sluice_cycle_duration_seconds_bucket{le=\"+Inf\"}", "sluice_cycle_duration_seconds_count",
        "sluice_slots{queue=\"normal\",state=\"used\"}",
        "sluice_preemptions_total{queue=\"normal\"}"}) {
    EXPECT_NE(r->body.find(name), std::string::npos) << name << "\n" << r->body;
  }
}

TEST_F(HttpApiTest, ASecondServerOnTheSameStateDirectoryRefusesToStart) {
  auto second = Server::Start(options_);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message().find("locked by another sluice server"), std::string::npos);
}

TEST_F(HttpApiTest, EventsStreamStateTransitions) {
  std::string received;
  std::thread reader([&] {
    httplib::Client sse("127.0.0.1", server_->port());
    sse.set_read_timeout(10);
    httplib::Headers headers{{"Authorization", "Bearer alice-token"}};
    sse.Get("/v1/events", headers, [&](const char* data, size_t n) {
      received.append(data, n);
      return received.find("\"CANCELLED\"") == std::string::npos;  // stop once seen
    });
  });
  // Submit and cancel until the stream (which may connect late) has seen a cancel.
  for (int i = 0; i < 200; ++i) {
    auto r = Post("/v1/jobs", R"({"command":"true","tasks":2})", "alice-token");
    const JobId id = json::parse(r->body)["id"];
    Post("/v1/jobs/" + std::to_string(id) + "/cancel", "", "alice-token");
    if (received.find("CANCELLED") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  reader.join();
  EXPECT_NE(received.find("event: job\ndata: {\"id\":"), std::string::npos) << received;
}

}  // namespace
}  // namespace sluice::server
