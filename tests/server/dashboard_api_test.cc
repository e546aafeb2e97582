// The dashboard's server side on loopback (in-process, port 0): the embedded files and their
// headers (R-UI-1), GET /v1/stats and its ring (R-UI-3), GET /v1/whoami, and the paged,
// sorted, searched GET /v1/jobs the Jobs page uses.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "server/loopback_options.h"
#include "server/server.h"
#include "server/stats_sampler.h"
#include "server/ui_assets.h"
#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;

constexpr const char* kConfig = R"(hosts:
  - {name: h1, slots: 4}
queues:
  - {name: normal, capacity: 50, max_capacity: 75, run_limit: 3}
  - {name: other}
auth:
  agent_token: agent-secret
  users:
    - {name: alice, token: alice-token}
    - {name: root, token: admin-token, admin: true}
)";

class DashboardApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = Server::Start(LoopbackOptions(dir_.path(), kConfig));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10);
  }

  httplib::Result Get(const std::string& path, const std::string& token = "alice-token",
                      httplib::Headers headers = {}) {
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client_->Get(path.c_str(), headers);
  }

  // Submits `n` jobs named job-1 ... job-n in one batch (queue `other`, which is idle: no
  // agent runs them).
  void SubmitJobs(int n) {
    json jobs = json::array();
    for (int i = 1; i <= n; ++i) {
      jobs.push_back({{"command", {"sleep", "60"}},
                      {"name", "job-" + std::to_string(i)},
                      {"queue", i % 2 == 0 ? "other" : "normal"}});
    }
    httplib::Headers headers = {{"Authorization", "Bearer alice-token"}};
    auto r =
        client_->Post("/v1/jobs/batch", headers, json{{"jobs", jobs}}.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 201) << r->body;
  }

  static std::vector<int64_t> Ids(const httplib::Result& r) {
    std::vector<int64_t> ids;
    for (const json& job : json::parse(r->body)) ids.push_back(job["id"].get<int64_t>());
    return ids;
  }

  TempDir dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(DashboardApiTest, RootRedirectsToTheDashboard) {
  for (const char* path : {"/", "/ui"}) {
    auto r = Get(path, "");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 302) << path;
    EXPECT_EQ(r->get_header_value("Location"), "/ui/") << path;
  }
}

TEST_F(DashboardApiTest, AppAddressesAnswerTheAppWithoutAToken) {
  for (const char* path :
       {"/ui/", "/ui/jobs", "/ui/jobs/12", "/ui/hosts", "/ui/queues", "/ui/some/unknown/page"}) {
    auto r = Get(path, "");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->get_header_value("Content-Type"), "text/html; charset=utf-8") << path;
    EXPECT_NE(r->body.find("src=\"/ui/app.js\""), std::string::npos) << path;
    EXPECT_EQ(r->get_header_value("Cache-Control"), "no-cache") << path;
    EXPECT_NE(r->get_header_value("Content-Security-Policy").find("default-src 'self'"),
              std::string::npos);
    EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
  }
}

TEST_F(DashboardApiTest, EveryEmbeddedFileIsServedWithItsTypeAndValidator) {
  ASSERT_GE(UiAssets().size(), 8u);
  for (const UiAsset& asset : UiAssets()) {
    SCOPED_TRACE(std::string(asset.path));
    auto r = Get("/ui/" + std::string(asset.path), "");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, asset.bytes);
    const std::string type = r->get_header_value("Content-Type");
    if (asset.path.ends_with(".js")) {
      EXPECT_EQ(type, "text/javascript; charset=utf-8");
    } else if (asset.path.ends_with(".css")) {
      EXPECT_EQ(type, "text/css; charset=utf-8");
    } else if (asset.path.ends_with(".svg")) {
      EXPECT_EQ(type, "image/svg+xml");
    }
    const std::string etag = r->get_header_value("ETag");
    ASSERT_FALSE(etag.empty());
    auto again = Get("/ui/" + std::string(asset.path), "", {{"If-None-Match", etag}});
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 304);
    EXPECT_TRUE(again->body.empty());
  }
}

TEST_F(DashboardApiTest, UnknownFilesAndTraversalsAre404) {
  for (const char* path : {"/ui/nothing.js", "/ui/pages/none.js", "/ui/../CMakeLists.txt",
                           "/ui/%2e%2e/%2e%2e/etc/passwd", "/ui/pages/..%2f..%2fapp.js",
                           "/ui//etc/passwd", "/ui/app.js.map"}) {
    auto r = Get(path, "");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_EQ(r->body.find("<html"), std::string::npos) << path;
  }
}

TEST_F(DashboardApiTest, WhoamiNamesTheCaller) {
  auto r = Get("/v1/whoami");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body), (json{{"user", "alice"}, {"admin", false}}));
  EXPECT_EQ(json::parse(Get("/v1/whoami", "admin-token")->body)["admin"], true);
  EXPECT_EQ(Get("/v1/whoami", "")->status, 401);
  EXPECT_EQ(Get("/v1/whoami", "agent-secret")->status, 403);
}

TEST_F(DashboardApiTest, StatsNeedATokenAndCarrySamplesAndCounts) {
  EXPECT_EQ(Get("/v1/stats", "")->status, 401);
  SubmitJobs(4);
  json stats = json::object();
  // The sampler samples at start, then every 10 s.
  int status = 0;
  ASSERT_TRUE(::sluice::testing::Eventually([&] {
    auto r = Get("/v1/stats");
    status = r ? r->status : 0;
    if (status != 200) return true;  // a failure, checked below
    stats = json::parse(r->body);
    return !stats.value("samples", json::array()).empty();
  })) << stats.dump();
  ASSERT_EQ(status, 200);
  EXPECT_EQ(stats["interval"], 10);
  EXPECT_EQ(stats["capacity"], 8640);
  ASSERT_FALSE(stats["samples"].empty());
  const json& sample = stats["samples"][0];
  for (const char* key : {"time", "hosts", "slots", "used_slots", "running", "pending", "held",
                          "starts", "ends", "queues"}) {
    EXPECT_TRUE(sample.contains(key)) << key;
  }
  const json& now = stats["now"];
  EXPECT_EQ(now["hosts"], 1);
  EXPECT_EQ(
      now["queues"]["normal"]["pending"].get<int>() + now["queues"]["other"]["pending"].get<int>(),
      4);
  EXPECT_EQ(now["jobs_by_state"]["PENDING"], 4);
  int64_t by_reason = 0;
  for (const auto& [reason, n] : now["pending_by_reason"].items()) by_reason += n.get<int64_t>();
  EXPECT_EQ(by_reason, 4);
  EXPECT_EQ(Get("/v1/stats?points=0")->status, 400);
  EXPECT_EQ(Get("/v1/stats?since=x")->status, 400);
  EXPECT_EQ(Get("/v1/stats?bogus=1")->status, 400);
}

TEST_F(DashboardApiTest, TheRingKeepsTheLastSamplesAndMergesToPoints) {
  StatsSampler sampler(server_->controller(), {.interval_seconds = 10, .capacity = 3});
  for (int i = 0; i < 5; ++i) sampler.SampleNow();
  Result<json> all = sampler.Json({});
  ASSERT_TRUE(all);
  EXPECT_EQ((*all)["samples"].size(), 3u);  // capacity
  Result<json> merged = sampler.Json({{"points", "2"}});
  ASSERT_TRUE(merged);
  EXPECT_EQ((*merged)["samples"].size(), 2u);
  Result<json> later = sampler.Json({{"since", "4000000000"}});
  ASSERT_TRUE(later);
  EXPECT_TRUE((*later)["samples"].empty());
}

TEST_F(DashboardApiTest, QueuesCarryCapacityAndLimits) {
  json queues = json::parse(Get("/v1/queues")->body);
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[0]["capacity"], 50.0);
  EXPECT_EQ(queues[0]["max_capacity"], 75.0);
  EXPECT_EQ(queues[0]["run_limit"], 3);
  EXPECT_TRUE(queues[1]["capacity"].is_null() || queues[1]["capacity"] == 0.0);
}

TEST_F(DashboardApiTest, JobPagesAreSortedOffsetAndCounted) {
  SubmitJobs(30);
  auto r = Get("/v1/jobs?offset=0&limit=10&sort=id&order=asc");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("X-Total-Count"), "30");
  std::vector<int64_t> ids = Ids(r);
  ASSERT_EQ(ids.size(), 10u);
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(ids.back(), 10);
  ids = Ids(Get("/v1/jobs?offset=25&limit=10&sort=id&order=asc"));
  EXPECT_EQ(ids, (std::vector<int64_t>{26, 27, 28, 29, 30}));
  EXPECT_EQ(Ids(Get("/v1/jobs?offset=0&limit=2")), (std::vector<int64_t>{30, 29}));  // id desc
  EXPECT_TRUE(Ids(Get("/v1/jobs?offset=100&limit=5")).empty());
  // Sorted by name (text), ties by id: job-1, job-10, job-11, ...
  json by_name = json::parse(Get("/v1/jobs?sort=name&order=asc&limit=3&fields=id,name")->body);
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name[0]["name"], "job-1");
  EXPECT_EQ(by_name[1]["name"], "job-10");
  EXPECT_FALSE(by_name[0].contains("queue"));
}

TEST_F(DashboardApiTest, JobPagesFilterAndSearch) {
  SubmitJobs(30);
  auto r = Get("/v1/jobs?search=JOB-2&sort=id&order=asc");  // case-insensitive
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("X-Total-Count"), "11");  // job-2, job-20 ... job-29
  r = Get("/v1/jobs?search=job&queue=other&limit=1000&sort=id");
  EXPECT_EQ(r->get_header_value("X-Total-Count"), "15");
  r = Get("/v1/jobs?state=running&sort=id");
  EXPECT_EQ(r->get_header_value("X-Total-Count"), "0");
  r = Get("/v1/jobs?host=h1&sort=id");
  EXPECT_EQ(r->get_header_value("X-Total-Count"), "0");  // nothing runs
  r = Get("/v1/jobs?search=sleep%2060&sort=id");         // the command
  EXPECT_EQ(r->get_header_value("X-Total-Count"), "30");
  // The plain listing is unchanged: every job, no count.
  r = Get("/v1/jobs");
  EXPECT_EQ(json::parse(r->body).size(), 30u);
  EXPECT_FALSE(r->has_header("X-Total-Count"));
}

TEST_F(DashboardApiTest, BadPageParametersAre400NamingThem) {
  for (const char* query : {"sort=color", "order=up", "offset=-1", "offset=x", "sort=id&limit=0",
                            "sort=id&limit=1001", "sort=id&bogus=1", "sort=id&fields=nope"}) {
    auto r = Get(std::string("/v1/jobs?") + query);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << query << ": " << r->body;
  }
}

}  // namespace
}  // namespace sluice::server
