// Hostile requests (issue 19, "Input"): each one used to crash the controller or answer 500;
// each must now get a 4xx naming what was wrong, and the server must stay up.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "server/guard_fixture.h"
#include "server/http_api.h"

namespace sluice::server {
namespace {

using nlohmann::json;

class HostileInputTest : public GuardTest {};

// A body nested `depth` deep: `[[[...1...]]]`.
std::string Nested(size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

TEST_F(HostileInputTest, InvalidUtf8InThePathIsA400NotACrash) {
  RawReply r = SendRaw(port_, RawGet("/%FF"));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(ErrorOf(r).find("UTF-8"), std::string::npos) << r.body;
  r = SendRaw(port_, RawGet("/v1/jobs/%C3%28", "alice-token"));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_TRUE(Healthy());
}

TEST_F(HostileInputTest, InvalidUtf8InQueryOrBodyIsA400) {
  RawReply query = SendRaw(port_, RawGet("/v1/jobs?user=%FF", "alice-token"));
  EXPECT_EQ(query.status, 400) << query.body;
  EXPECT_NE(ErrorOf(query).find("user"), std::string::npos) << query.body;
  RawReply body = SendRaw(port_, RawPost("/v1/jobs", "{\"command\":\"\xff\"}", "alice-token"));
  EXPECT_EQ(body.status, 400) << body.body;
  RawReply name = SendRaw(
      port_, RawPost("/v1/jobs", "{\"command\":\"true\",\"name\":\"a\xc3\"}", "alice-token"));
  EXPECT_EQ(name.status, 400) << name.body;
  EXPECT_TRUE(Healthy());
}

TEST_F(HostileInputTest, DeepNestingAnywhereIsA400WithoutRecursion) {
  const std::string deep = Nested(75'000);
  struct Case {
    const char* name;
    std::string path;
    std::string body;
    std::string token;
  };
  const Case cases[] = {
      {"whole body", "/v1/jobs", deep, "alice-token"},
      {"command", "/v1/jobs", "{\"command\":" + deep + "}", "alice-token"},
      {"name", "/v1/jobs", "{\"command\":\"true\",\"name\":" + deep + "}", "alice-token"},
      {"env", "/v1/jobs", "{\"command\":\"true\",\"env\":{\"A\":" + deep + "}}", "alice-token"},
      {"batch", "/v1/jobs/batch", "{\"jobs\":[{\"command\":" + deep + "}]}", "alice-token"},
      {"register", "/v1/agents/register", "{\"name\":\"h1\",\"tags\":" + deep + "}",
       "agent-secret"},
      {"heartbeat", "/v1/agents/h1/heartbeat", "{\"running\":" + deep + "}", "agent-secret"},
      {"depth 65", "/v1/jobs", "{\"command\":" + Nested(64) + "}", "alice-token"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RawReply r = SendRaw(port_, RawPost(c.path, c.body, c.token));
    EXPECT_EQ(r.status, 400) << r.body.substr(0, 200);
    EXPECT_NE(ErrorOf(r).find("nest"), std::string::npos) << r.body.substr(0, 200);
  }
  // Depth 64 is allowed through to the field checks (which refuse it as a command).
  RawReply ok =
      SendRaw(port_, RawPost("/v1/jobs", "{\"command\":" + Nested(63) + "}", "alice-token"));
  EXPECT_EQ(ok.status, 400);
  EXPECT_NE(ErrorOf(ok).find("command"), std::string::npos) << ok.body.substr(0, 200);
  EXPECT_TRUE(Healthy());
}

TEST_F(HostileInputTest, AnExitReportWithoutExitCodeIsA400) {
  RawReply reg =
      SendRaw(port_, RawPost("/v1/agents/register", R"({"name":"h1","slots":4})", "agent-secret"));
  ASSERT_EQ(reg.status, 200) << reg.body;
  RawReply r = SendRaw(port_, RawPost("/v1/agents/h1/heartbeat",
                                      R"({"exited":[{"job":1,"cause":"exit"}]})", "agent-secret"));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(ErrorOf(r).find("exited[0].exit_code"), std::string::npos) << r.body;
  EXPECT_TRUE(Healthy());
}

std::string Gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST_F(HostileInputTest, CompressedBodiesAreRefusedUninflated) {
  // 64 MiB of spaces around a job: small compressed, huge inflated.
  const std::string bomb = Gzip("{\"command\":\"true\"}" + std::string(64 << 20, ' '));
  ASSERT_LT(bomb.size(), 1u << 20);
  for (const char* encoding : {"gzip", "deflate", "br"}) {
    SCOPED_TRACE(encoding);
    RawReply r = SendRaw(port_, RawPost("/v1/jobs", bomb, "alice-token",
                                        std::string("Content-Encoding: ") + encoding + "\r\n"));
    EXPECT_EQ(r.status, 415) << r.body;
    EXPECT_NE(ErrorOf(r).find("Content-Encoding"), std::string::npos) << r.body;
  }
  // Chunked bodies escape the length limit in the HTTP library: refused too.
  RawReply chunked = SendRaw(port_,
                             "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                             "Authorization: Bearer alice-token\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n"
                             "3\r\n{}\n\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.status, 411) << chunked.body;
  EXPECT_TRUE(Healthy());
}

TEST_F(HostileInputTest, AuthenticationAndSizeComeBeforeTheBodyIsRead) {
  // Headers only: the body is announced but never sent. The answer must come at once.
  struct Case {
    const char* name;
    std::string headers;
    int status;
  };
  const Case cases[] = {
      {"no token",
       "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
       "Content-Length: 1000000\r\n\r\n",
       401},
      {"bad token",
       "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\n"
       "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n",
       401},
      {"too large",
       "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer alice-token\r\n"
       "Content-Type: application/json\r\nContent-Length: 5000000\r\n\r\n",  // > kMaxBodyBytes
       413},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto start = std::chrono::steady_clock::now();
    RawReply r = SendRaw(port_, c.headers, std::chrono::milliseconds(3000));
    EXPECT_EQ(r.status, c.status) << r.body;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  }
}

TEST_F(HostileInputTest, NumbersOutOfRangeAreA400NamingTheField) {
  struct Case {
    const char* name;
    std::string request;
    const char* field;
  };
  const Case cases[] = {
      {"job id", RawGet("/v1/jobs/99999999999999999999", "alice-token"), "job id"},
      {"cancel id", RawPost("/v1/jobs/99999999999999999999/cancel", "", "alice-token"), "job id"},
      {"peek id", RawGet("/v1/jobs/99999999999999999999/peek", "alice-token"), "job id"},
      {"requeue id", RawPost("/v1/jobs/99999999999999999999/requeue", "", "alice-token"), "job id"},
      {"modify id", RawRequest("PATCH", "/v1/jobs/99999999999999999999", "{}", "alice-token"),
       "job id"},
      {"tasks 1e400", RawPost("/v1/jobs", R"({"command":"true","tasks":1e400})", "alice-token"),
       "tasks"},
      {"priority",
       RawPost("/v1/jobs", R"({"command":"true","priority":18446744073709551611})", "alice-token"),
       "priority"},
      {"batch tasks",
       RawPost("/v1/jobs/batch", R"({"jobs":[{"command":"a"},{"command":"b","tasks":-1e999}]})",
               "alice-token"),
       "jobs[1].tasks"},
      {"slots",
       RawPost("/v1/agents/register", R"({"name":"h1","slots":4294967300})", "agent-secret"),
       "slots"},
      {"running",
       RawPost("/v1/agents/register", R"({"name":"h1","running":[18446744073709551615]})",
               "agent-secret"),
       "running"},
      {"exit job",
       RawPost("/v1/agents/h1/heartbeat",
               R"({"exited":[{"job":18446744073709551615,"exit_code":0}]})", "agent-secret"),
       "exited[0].job"},
      {"limit", RawGet("/v1/jobs?limit=99999999999999999999999", "alice-token"), "limit"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RawReply r = SendRaw(port_, c.request);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_NE(ErrorOf(r).find(c.field), std::string::npos) << r.body;
  }
  // Nothing was accepted, and the server is up.
  httplib::Client client("127.0.0.1", port_);
  auto jobs = client.Get("/v1/jobs", {{"Authorization", "Bearer alice-token"}});
  ASSERT_TRUE(jobs);
  EXPECT_EQ(json::parse(jobs->body).size(), 0u);
}

TEST_F(HostileInputTest, AnOverlongPathIsRefusedBeforeRouting) {
  RawReply r = SendRaw(port_, RawGet("/v1/jobs/" + std::string(6000, '1'), "alice-token"));
  EXPECT_EQ(r.status, 414) << r.body;
  r = SendRaw(port_, RawGet("/v1/agents/" + std::string(6000, 'a') + "/heartbeat"));
  EXPECT_EQ(r.status, 414) << r.body;
  EXPECT_TRUE(Healthy());
}

}  // namespace
}  // namespace sluice::server

namespace sluice::server {
namespace {

// Issue 48: a NUL byte used to cut the stored output path or working directory silently (the
// agent and the kernel read C strings). Every string field with one is a 400 naming it.
TEST_F(HostileInputTest, ANulByteInAnyStringFieldIsA400NamingTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"command":"true","output":"/tmp/a\u0000b"})", "output"},
      {R"({"command":"true","cwd":"/tmp\u0000/x"})", "cwd"},
      {R"({"command":"true","name":"a\u0000"})", "name"},
      {R"({"command":"echo \u0000 x"})", "command"},
      {R"({"command":["echo","a\u0000"]})", "command[1]"},
      {R"({"command":"true","env":{"A":"x\u0000y"}})", "env.A"},
      {R"({"command":"true","env":{"A\u0000B":"x"}})", "env"},
      {R"({"command":"true","umask":512})", "umask"},
  };
  for (const auto& [body, field] : cases) {
    SCOPED_TRACE(body);
    RawReply r = SendRaw(port_, RawPost("/v1/jobs", body, "alice-token"));
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_NE(ErrorOf(r).find(field), std::string::npos) << r.body;
  }
  httplib::Client client("127.0.0.1", port_);
  auto jobs = client.Get("/v1/jobs", {{"Authorization", "Bearer alice-token"}});
  ASSERT_TRUE(jobs);
  EXPECT_EQ(json::parse(jobs->body).size(), 0u);
}

}  // namespace
}  // namespace sluice::server
