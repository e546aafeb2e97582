// `sluice rsv`, `submit -U` and brsvdel as processes against a recording fake of the
// reservation API (R-RSV-1): each verb's method, path and body as docs/api.md fixes them, its
// output, and a refusal's message and exit code. The real controller's side is exercised by
// tests/integration/reservation_cli_test.cc once it exists.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "testing/build_paths.h"
#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Recorded {
  std::string method, path;
  json body;
};

// Its window is in 2030: still ahead whenever the test runs.
const json kFix = json::parse(R"({"name": "fix", "hosts": ["h1", "h2"], "slots": null,
    "request": null, "begin": 1893510000, "end": 1893517200, "duration": 7200, "users": [],
    "groups": [], "maint": true, "ignore_jobs": false, "overrun": 0, "recur": null,
    "creator": "root", "created": 1796500000, "windows": [[1893510000, 1893517200]],
    "state": "waiting"})");

// Answers /v1/reservations as docs/api.md says, recording every request: `fix` exists, any
// other name is 404 with the API's error body.
class FakeController {
 public:
  FakeController() {
    const auto record = [this](const httplib::Request& req) {
      std::lock_guard lock(mu_);
      requests_.push_back({req.method, req.path, json::parse(req.body, nullptr, false)});
    };
    const auto reply = [](httplib::Response& res, int status, const json& body) {
      res.status = status;
      res.set_content(body.dump(), "application/json");
    };
    server_.Get("/v1/reservations", [=](const httplib::Request& req, httplib::Response& res) {
      record(req);
      reply(res, 200, {{"reservations", {kFix}}});
    });
    server_.Post("/v1/reservations", [=](const httplib::Request& req, httplib::Response& res) {
      record(req);
      reply(res, 201, kFix);
    });
    server_.Post("/v1/reservations/preview",
                 [=](const httplib::Request& req, httplib::Response& res) {
                   record(req);
                   reply(res, 200, json::parse(R"({"running": [{"id": 12, "user": "bob",
                       "hosts": ["h1"], "end": null}], "delayed": []})"));
                 });
    const auto named = [=](const httplib::Request& req, httplib::Response& res) {
      record(req);
      const std::string name = req.matches[1];
      if (name != "fix") return reply(res, 404, {{"error", "no reservation '" + name + "'"}});
      reply(res, 200, req.method == "DELETE" ? json{{"deleted", name}} : kFix);
    };
    server_.Get(R"(/v1/reservations/([^/]+))", named);
    server_.Patch(R"(/v1/reservations/([^/]+))", named);
    server_.Delete(R"(/v1/reservations/([^/]+))", named);
    server_.Post("/v1/jobs", [=](const httplib::Request& req, httplib::Response& res) {
      record(req);
      reply(res, 201, {{"id", 5}});
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(sluice::testing::Eventually([&] { return server_.is_running(); }));
  }
  ~FakeController() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Recorded> TakeRequests() {
    std::lock_guard lock(mu_);
    return std::exchange(requests_, {});
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<Recorded> requests_;
};

class RsvCommandTest : public ::testing::Test {
 protected:
  // `program ARGS` (the sluice binary, or a drop-in name) with the fake as its controller.
  sluice::testing::ProcessResult Run(std::vector<std::string> args,
                                     const std::string& program = "") {
    const fs::path sluice = sluice::testing::SluiceBinary();
    const fs::path binary = program.empty() ? sluice : sluice.parent_path() / "compat" / program;
    std::vector<std::string> argv = {"/usr/bin/env", "TZ=UTC", "SLUICE_SERVER=" + fake_.url(),
                                     "SLUICE_TOKEN=admin-token", binary.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return sluice::testing::RunProcess(argv, dir_.path(), std::chrono::seconds(60));
  }

  FakeController fake_;
  sluice::testing::TempDir dir_;
};

TEST_F(RsvCommandTest, AddPostsTheBodyAndSaysItIsCreated) {
  auto r = Run({"rsv", "add", "fix", "-m", "h[1-2]", "-b", "2026-12-06T15:00Z", "-d", "2h",
                "--maint", "--recur", "0 6 * * sun", "--tz", "Europe/Berlin"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "Reservation <fix> is created.\n");
  const std::vector<Recorded> sent = fake_.TakeRequests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].method, "POST");
  EXPECT_EQ(sent[0].path, "/v1/reservations");
  EXPECT_EQ(sent[0].body, json::parse(R"({"name": "fix", "hosts": ["h1", "h2"],
      "begin": 1796569200, "duration": 7200, "maint": true,
      "recur": {"cron": "0 6 * * sun", "tz": "Europe/Berlin"}})"));
}

TEST_F(RsvCommandTest, BadInputIsRefusedBeforeAnythingIsSent) {
  auto r = Run({"rsv", "add", "fix", "-m", "h1", "-b", "tomorrow", "-d", "2h"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.stderr_text.starts_with("error: -b tomorrow: expected a time")) << r.stderr_text;
  EXPECT_TRUE(fake_.TakeRequests().empty());
}

TEST_F(RsvCommandTest, ListShowModifyPreviewAndDelete) {
  auto r = Run({"rsv", "list"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("fix   waiting  h[1-2]  2030-01-01 15:00 - 17:00"),
            std::string::npos)
      << r.stdout_text;
  r = Run({"rsv", "show", "fix"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_TRUE(r.stdout_text.starts_with("Reservation fix\n  State:          waiting\n"))
      << r.stdout_text;
  r = Run({"rsv", "modify", "fix", "-e", "2026-12-06T18:00Z", "--no-maint"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "Reservation <fix> is modified.\n");
  r = Run({"rsv", "preview", "-m", "h1", "-b", "2026-12-06T15:00Z", "-d", "1h", "--maint"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("12     bob   h1     -"), std::string::npos) << r.stdout_text;
  r = Run({"rsv", "delete", "fix", "other"});
  EXPECT_EQ(r.exit_code, 2);  // a 404 is bad input
  EXPECT_EQ(r.stdout_text, "Reservation <fix> is deleted.\n");
  EXPECT_EQ(r.stderr_text, "Reservation <other>: error: no reservation 'other'\n");

  const std::vector<Recorded> sent = fake_.TakeRequests();
  std::vector<std::string> calls;
  for (const Recorded& call : sent) calls.push_back(call.method + " " + call.path);
  EXPECT_EQ(calls, (std::vector<std::string>{
                       "GET /v1/reservations", "GET /v1/reservations/fix",
                       "PATCH /v1/reservations/fix", "POST /v1/reservations/preview",
                       "DELETE /v1/reservations/fix", "DELETE /v1/reservations/other"}));
  ASSERT_EQ(sent.size(), 6u);
  EXPECT_EQ(sent[2].body, json::parse(R"({"end": 1796580000, "maint": false})"));
  EXPECT_EQ(sent[3].body, json::parse(R"({"hosts": ["h1"], "begin": 1796569200,
      "duration": 3600, "maint": true})"));
}

TEST_F(RsvCommandTest, SubmitDashUAndTheDropInsSpeakTheSameApi) {
  auto r = Run({"submit", "-U", "course", "--parsable", "--", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  r = Run({"--reservation=course", "--wrap=true"}, "sbatch");
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  r = Run({"-U", "course", "true"}, "bsub");
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  r = Run({"fix"}, "brsvdel");
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "Reservation fix is being deleted\n");
  r = Run({"delete", "ReservationName=fix"}, "scontrol");
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  const std::vector<Recorded> sent = fake_.TakeRequests();
  int jobs = 0;
  for (const Recorded& call : sent) {
    if (call.path != "/v1/jobs") continue;
    ++jobs;
    EXPECT_EQ(call.body.value("reservation", ""), "course") << call.body.dump();
  }
  EXPECT_EQ(jobs, 3);
  EXPECT_EQ(sent.back().method + " " + sent.back().path, "DELETE /v1/reservations/fix");
}

}  // namespace
}  // namespace sluice::cli
