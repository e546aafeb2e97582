// The agent protocol's messages: encode/decode round trips, and each request error names its
// field (codes and fields compared, not whole messages).
#include "wire/agent_protocol.h"

#include <gtest/gtest.h>

namespace sluice::wire {
namespace {

using nlohmann::json;

TEST(AgentProtocolTest, RegisterRoundTrip) {
  RegisterRequest request{.host = {.name = "h1",
                                   .slots = 4,
                                   .resources = {{"mem", 64000}},
                                   .attributes = {{"type", "linux"}},
                                   .tags = {"a", "b"}},
                          .running = {7, 3},
                          .epoch = 2};
  const json body = EncodeRegister(request);
  EXPECT_EQ(body["running"], json({3, 7}));
  Result<RegisterRequest> decoded = DecodeRegister(body);
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(decoded->host.name, "h1");
  EXPECT_EQ(decoded->host.slots, 4);
  EXPECT_EQ(decoded->host.resources, request.host.resources);
  EXPECT_EQ(decoded->host.attributes, request.host.attributes);
  EXPECT_EQ(decoded->host.tags, request.host.tags);
  EXPECT_EQ(decoded->running, request.running);
  EXPECT_EQ(decoded->epoch, 2u);
}

TEST(AgentProtocolTest, RegisterWithoutSlotsCountsOne) {
  const json body = EncodeRegister({.host = {.name = "h1", .slots = 0}});
  EXPECT_FALSE(body.contains("slots"));
  Result<RegisterRequest> decoded = DecodeRegister(body);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->host.slots, 1);
  EXPECT_EQ(decoded->epoch, 0u);
}

TEST(AgentProtocolTest, RegisterErrorsNameTheField) {
  struct Case {
    std::string_view name;
    json body;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"not an object", json::array(), "body"},
      {"unknown field", {{"name", "h1"}, {"color", 1}}, "color"},
      {"no name", json::object(), "name"},
      {"bad name", {{"name", "a b"}}, "name"},
      {"name not a string", {{"name", 5}}, "name"},
      {"negative slots", {{"name", "h1"}, {"slots", -1}}, "slots"},
      {"slots a string", {{"name", "h1"}, {"slots", "4"}}, "slots"},
      {"resource a string", {{"name", "h1"}, {"resources", {{"mem", "x"}}}}, "resources.mem"},
      {"attribute a number", {{"name", "h1"}, {"attributes", {{"os", 1}}}}, "attributes.os"},
      {"tags not strings", {{"name", "h1"}, {"tags", {1}}}, "tags"},
      {"running not a list", {{"name", "h1"}, {"running", 3}}, "running"},
      {"running not ids", {{"name", "h1"}, {"running", {"3"}}}, "running"},
      {"epoch a string", {{"name", "h1"}, {"epoch", "1"}}, "epoch"},
      {"epoch null", {{"name", "h1"}, {"epoch", nullptr}}, "epoch"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<RegisterRequest> decoded = DecodeRegister(c.body);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(decoded.error().message().rfind(c.field + ":", 0), 0u) << decoded.error().message();
  }
}

TEST(AgentProtocolTest, HeartbeatRoundTrip) {
  HeartbeatRequest request{
      .epoch = 3,
      .wait_ms = 500,
      .running = {4},
      .exited = {{.job = 5, .run = (uint64_t{3} << 40) | 7, .exit_code = 2},
                 {.job = 6, .exit_code = 137, .signal = 9, .cause = ExitCause::kKilled},
                 {.job = 7, .exit_code = 143, .signal = 15, .cause = ExitCause::kRunLimit},
                 {.job = 9,
                  .exit_code = 137,
                  .signal = 9,
                  .cause = ExitCause::kMemLimit,
                  .cpu_seconds = 1.25,
                  .max_rss_mb = 64,
                  .message = "memory limit 64 MB reached"}},
      .launch_failed = {{.job = 8, .message = "exec: x: not found"}},
      .load = HostLoad{.r1m = 1.5, .r5m = 0.25, .r15m = 0, .mem_available_mb = 2048}};
  Result<HeartbeatRequest> decoded = DecodeHeartbeat(EncodeHeartbeat(request));
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(decoded->epoch, 3u);
  EXPECT_EQ(decoded->wait_ms, 500);
  EXPECT_EQ(decoded->running, request.running);
  ASSERT_EQ(decoded->exited.size(), 4u);
  EXPECT_EQ(decoded->exited[0].ShellStatus(), 2);
  EXPECT_EQ(decoded->exited[0].run, (uint64_t{3} << 40) | 7);
  EXPECT_EQ(decoded->exited[1].run, 0u);  // not said
  EXPECT_EQ(decoded->exited[0].cause, ExitCause::kExit);
  EXPECT_EQ(decoded->exited[1].ShellStatus(), 137);
  EXPECT_EQ(decoded->exited[1].cause, ExitCause::kKilled);
  EXPECT_EQ(decoded->exited[2].cause, ExitCause::kRunLimit);
  EXPECT_FALSE(decoded->exited[2].cpu_seconds);  // not measured: absent
  EXPECT_EQ(decoded->exited[3].cause, ExitCause::kMemLimit);
  EXPECT_EQ(decoded->exited[3].cpu_seconds, 1.25);
  EXPECT_EQ(decoded->exited[3].max_rss_mb, 64.0);
  EXPECT_EQ(decoded->exited[3].message, "memory limit 64 MB reached");
  ASSERT_EQ(decoded->launch_failed.size(), 1u);
  EXPECT_EQ(decoded->launch_failed[0].job, 8);
  EXPECT_EQ(decoded->launch_failed[0].message, "exec: x: not found");
  EXPECT_EQ(decoded->load, request.load);
  // Without a load (an older agent): none, not zeros.
  decoded = DecodeHeartbeat(EncodeHeartbeat(HeartbeatRequest{.epoch = 3}));
  ASSERT_TRUE(decoded);
  EXPECT_FALSE(decoded->load);
}

// Issue 43: an agent stopping for a restart says so; absent means not.
TEST(AgentProtocolTest, HeartbeatRestartingRoundTripsAndIsABoolean) {
  const json body = EncodeHeartbeat({.restarting = true});
  EXPECT_EQ(body["restarting"], true);
  Result<HeartbeatRequest> decoded = DecodeHeartbeat(body);
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_TRUE(decoded->restarting);
  EXPECT_FALSE(EncodeHeartbeat({}).contains("restarting"));
  EXPECT_FALSE(DecodeHeartbeat(json::object())->restarting);
  EXPECT_EQ(DecodeHeartbeat({{"restarting", 1}}).error().code(), StatusCode::kInvalidArgument);
}

TEST(AgentProtocolTest, HeartbeatDefaultsAndClamps) {
  Result<HeartbeatRequest> decoded = DecodeHeartbeat(
      {{"wait_ms", 99'999},
       {"exited", {{{"job", 1}, {"exit_code", nullptr}, {"signal", 9}, {"cause", "new"}}}}});
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(decoded->wait_ms, kMaxWaitMs);
  ASSERT_EQ(decoded->exited.size(), 1u);
  EXPECT_EQ(decoded->exited[0].ShellStatus(), 137);
  EXPECT_EQ(decoded->exited[0].cause, ExitCause::kExit);
  decoded = DecodeHeartbeat({{"wait_ms", -5}});
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->wait_ms, 0);
}

TEST(AgentProtocolTest, HeartbeatErrorsNameTheField) {
  struct Case {
    std::string_view name;
    json body;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"unknown field", {{"bogus", 1}}, "bogus"},
      {"wait a string", {{"wait_ms", "1"}}, "wait_ms"},
      {"exited not a list", {{"exited", 5}}, "exited"},
      {"exit not an object", {{"exited", {5}}}, "exited[0]"},
      {"exit without job", {{"exited", {{{"cause", "exit"}}}}}, "exited[0].job"},
      {"exit code a string",
       {{"exited", {{{"job", 1}, {"exit_code", "1"}}}}},
       "exited[0].exit_code"},
      {"exit without exit code or signal", {{"exited", {{{"job", 1}}}}}, "exited[0].exit_code"},
      {"exit job beyond int64",
       {{"exited", {{{"job", 18446744073709551615u}, {"exit_code", 0}}}}},
       "exited[0].job"},
      {"exit code beyond int64",
       {{"exited", {{{"job", 1}, {"exit_code", 18446744073709551615u}}}}},
       "exited[0].exit_code"},
      {"running beyond int64", {{"running", {18446744073709551615u}}}, "running"},
      {"signal a float",
       {{"exited", {{{"job", 1}, {"exit_code", 1}, {"signal", 1.5}}}}},
       "exited[0].signal"},
      {"cause a number",
       {{"exited", {{{"job", 1}, {"exit_code", 1}, {"cause", 1}}}}},
       "exited[0].cause"},
      {"negative cpu",
       {{"exited", {{{"job", 1}, {"exit_code", 1}, {"cpu_seconds", -1}}}}},
       "exited[0].cpu_seconds"},
      {"rss a string",
       {{"exited", {{{"job", 1}, {"exit_code", 1}, {"max_rss_mb", "1"}}}}},
       "exited[0].max_rss_mb"},
      {"message a number",
       {{"exited", {{{"job", 1}, {"exit_code", 1}, {"message", 1}}}}},
       "exited[0].message"},
      {"run negative",
       {{"exited", {{{"job", 1}, {"exit_code", 1}, {"run", -1}}}}},
       "exited[0].run"},
      {"failure job a string", {{"launch_failed", {{{"job", "1"}}}}}, "launch_failed[0].job"},
      {"failure message a number",
       {{"launch_failed", {{{"job", 1}, {"message", 2}}}}},
       "launch_failed[0].message"},
      {"load not an object", {{"load", 1}}, "load"},
      {"load without r5m", {{"load", {{"r1m", 1}, {"r15m", 1}}}}, "load.r5m"},
      {"negative load", {{"load", {{"r1m", -1}, {"r5m", 1}, {"r15m", 1}}}}, "load.r1m"},
      {"memory a float",
       {{"load", {{"r1m", 1}, {"r5m", 1}, {"r15m", 1}, {"mem_available_mb", 1.5}}}},
       "load.mem_available_mb"},
      {"memory beyond int64",
       {{"load",
         {{"r1m", 1}, {"r5m", 1}, {"r15m", 1}, {"mem_available_mb", 18446744073709551615u}}}},
       "load.mem_available_mb"},
      {"load unknown member",
       {{"load", {{"r1m", 1}, {"r5m", 1}, {"r15m", 1}, {"swap", 1}}}},
       "load.swap"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<HeartbeatRequest> decoded = DecodeHeartbeat(c.body);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(decoded.error().message().rfind(c.field + ":", 0), 0u) << decoded.error().message();
  }
}

TEST(AgentProtocolTest, RegisterReplyRoundTripAndClamps) {
  Result<RegisterReply> decoded =
      DecodeRegisterReply(EncodeRegisterReply({.epoch = 4, .lease_seconds = 7, .heartbeat_ms = 1}));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->epoch, 4u);
  EXPECT_EQ(decoded->lease_seconds, 7);
  EXPECT_EQ(decoded->heartbeat_ms, 10);
  EXPECT_FALSE(DecodeRegisterReply({{"lease_seconds", 0}}));
  // The absence an agent keeps its jobs without a controller (issue 44): the lease when an
  // older controller sends none; never shorter than the lease.
  EXPECT_EQ(decoded->absence_seconds, 7);
  Result<RegisterReply> absent = DecodeRegisterReply(EncodeRegisterReply(
      {.epoch = 1, .lease_seconds = 10, .absence_seconds = 300, .heartbeat_ms = 500}));
  ASSERT_TRUE(absent);
  EXPECT_EQ(absent->absence_seconds, 300);
  EXPECT_FALSE(DecodeRegisterReply({{"lease_seconds", 10}, {"absence_seconds", 5}}));
  EXPECT_FALSE(DecodeRegisterReply(json::array()));
}

TEST(AgentProtocolTest, HeartbeatReplyRoundTrip) {
  HeartbeatReply reply{.epoch = 2,
                       .launch = {{.job = 9,
                                   .run = 12,
                                   .argv = {"/bin/sh", "-c", "true"},
                                   .command = "true",
                                   .cwd = "/tmp",
                                   .output = "out.%j",
                                   .run_limit = std::chrono::milliseconds(1500),
                                   .env = {{"A", "1"}},
                                   .user = "ann",
                                   .account = "nobody",
                                   .mem_limit_mb = 128,
                                   .cpu_limit = 2}},
                       .kill = {{.job = 3, .grace_seconds = 5}},
                       .ack = {1, 2}};
  const json body = EncodeHeartbeatReply(reply);
  EXPECT_EQ(body["launch"][0]["run_limit"], json(1.5));
  Result<HeartbeatReply> decoded = DecodeHeartbeatReply(body);
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(decoded->epoch, 2u);
  ASSERT_EQ(decoded->launch.size(), 1u);
  const Launch& launch = decoded->launch[0];
  EXPECT_EQ(launch.job, 9);
  EXPECT_EQ(launch.run, 12u);
  EXPECT_EQ(launch.argv, reply.launch[0].argv);
  EXPECT_EQ(launch.command, "");  // argv wins
  EXPECT_EQ(launch.cwd, "/tmp");
  EXPECT_EQ(launch.output, "out.%j");
  EXPECT_EQ(launch.run_limit, std::chrono::milliseconds(1500));
  EXPECT_EQ(launch.env, reply.launch[0].env);
  EXPECT_EQ(launch.user, "ann");
  EXPECT_EQ(launch.account, "nobody");
  EXPECT_EQ(launch.mem_limit_mb, 128);
  EXPECT_EQ(launch.cpu_limit, 2);
  Result<HeartbeatReply> unlimited =
      DecodeHeartbeatReply(EncodeHeartbeatReply({.launch = {{.job = 1, .argv = {"x"}}}}));
  ASSERT_TRUE(unlimited) << unlimited.error().message();
  EXPECT_FALSE(unlimited->launch.at(0).mem_limit_mb);
  EXPECT_FALSE(unlimited->launch.at(0).cpu_limit);
  EXPECT_EQ(unlimited->launch.at(0).run, 0u);  // from an older controller
  ASSERT_EQ(decoded->kill.size(), 1u);
  EXPECT_EQ(decoded->kill[0].grace_seconds, 5);
  EXPECT_EQ(decoded->ack, reply.ack);
  EXPECT_EQ(EncodeLaunch({.job = 1, .run_limit = std::chrono::seconds(60)})["run_limit"], json(60));
}

TEST(AgentProtocolTest, HeartbeatReplyErrorsNameTheField) {
  struct Case {
    std::string_view name;
    json body;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"launch without job", {{"launch", {{{"command", "x"}}}}}, "launch[0].job"},
      {"launch job a string", {{"launch", {{{"job", "1"}, {"command", "x"}}}}}, "launch[0].job"},
      {"launch without command", {{"launch", {{{"job", 1}}}}}, "launch[0]"},
      {"empty argv", {{"launch", {{{"job", 1}, {"argv", json::array()}}}}}, "launch[0].argv"},
      {"env not strings",
       {{"launch", {{{"job", 1}, {"command", "x"}, {"env", {{"A", 1}}}}}}},
       "launch[0].env.A"},
      {"memory limit zero",
       {{"launch", {{{"job", 1}, {"command", "x"}, {"mem_limit_mb", 0}}}}},
       "launch[0].mem_limit_mb"},
      {"cpu limit a string",
       {{"launch", {{{"job", 1}, {"command", "x"}, {"cpu_limit", "2"}}}}},
       "launch[0].cpu_limit"},
      {"account a number",
       {{"launch", {{{"job", 1}, {"command", "x"}, {"account", 0}}}}},
       "launch[0].account"},
      {"run a string",
       {{"launch", {{{"job", 1}, {"command", "x"}, {"run", "2"}}}}},
       "launch[0].run"},
      {"kill not a list", {{"kill", 1}}, "kill"},
      {"ack not ids", {{"ack", {"x"}}}, "ack[]"},
      {"signal without job", {{"signal", {{{"signal", "USR1"}}}}}, "signal.job"},
      {"signal a number", {{"signal", {{{"job", 1}, {"signal", 10}}}}}, "signal.signal"},
      {"signal unknown", {{"signal", {{{"job", 1}, {"signal", "SEGV"}}}}}, "signal.signal"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<HeartbeatReply> decoded = DecodeHeartbeatReply(c.body);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().message().rfind(c.field + ":", 0), 0u) << decoded.error().message();
  }
}

TEST(AgentProtocolTest, SignalOrdersRoundTripByName) {
  const json body = EncodeHeartbeatReply({.signals = {{.job = 4, .signal = "USR1"},
                                                      {.job = 5, .signal = "TERM"}}});
  EXPECT_EQ(body["signal"][0], json({{"job", 4}, {"signal", "USR1"}}));
  Result<HeartbeatReply> decoded = DecodeHeartbeatReply(body);
  ASSERT_TRUE(decoded) << decoded.error().message();
  ASSERT_EQ(decoded->signals.size(), 2u);
  EXPECT_EQ(decoded->signals[1].job, 5);
  EXPECT_EQ(decoded->signals[1].signal, "TERM");
  EXPECT_FALSE(EncodeHeartbeatReply({}).contains("signal"));  // none: no field
}

TEST(AgentProtocolTest, ExitCauseStrings) {
  EXPECT_EQ(ToString(ExitCause::kExit), "exit");
  EXPECT_EQ(ToString(ExitCause::kRunLimit), "run_limit");
  EXPECT_EQ(ToString(ExitCause::kKilled), "killed");
  EXPECT_EQ(ToString(ExitCause::kMemLimit), "mem_limit");
}

}  // namespace
}  // namespace sluice::wire
