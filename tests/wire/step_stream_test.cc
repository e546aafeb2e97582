// The step stream's framing (wire/step_stream.h): frames, pages, orders and kills survive the
// round trip, and every malformed input is refused with the element and field named.
#include "wire/step_stream.h"

#include <gtest/gtest.h>

#include "base/base64.h"
#include "wire/host_slots.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

TEST(Base64Test, RoundTripsEveryLengthAndByte) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    bytes += static_cast<char>(i * 37);
    const std::optional<std::string> back = Base64Decode(Base64Encode(bytes));
    ASSERT_TRUE(back.has_value()) << i;
    EXPECT_EQ(*back, bytes) << i;
  }
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");  // RFC 4648 section 10
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
}

TEST(Base64Test, RefusesWhatIsNotCanonical) {
  for (const char* bad : {"Zm8", "Zm9=vYmFy", "Zm*=", "Zm9==", "Zm9vYmF=", "Zh==", "===="}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
  EXPECT_EQ(Base64Decode(""), std::optional<std::string>(""));
}

TEST(StepFramesTest, EveryKindRoundTrips) {
  std::vector<StepFrame> frames = {
      StepFrame::Data(FrameKind::kStdout, std::string("out\0\xff", 5)),
      StepFrame::Data(FrameKind::kStderr, "err"),
      StepFrame::Data(FrameKind::kStdin, "in"),
      StepFrame{.kind = FrameKind::kStdinEof},
      StepFrame{.kind = FrameKind::kSignal, .signal = 15},
      StepFrame{.kind = FrameKind::kResize, .rows = 40, .cols = 120},
      StepFrame{.kind = FrameKind::kExit,
                .exit = {.status = 143, .signal = 15, .cpu_seconds = 0.5, .max_rss_mb = 3}},
      StepFrame{.kind = FrameKind::kExit, .exit = {.status = 255, .error = "no account"}},
  };
  Result<std::vector<StepFrame>> back = DecodeFrames(json{{"frames", EncodeFrames(frames)}});
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(*back, frames);
}

TEST(StepFramesTest, MalformedFramesAreRefusedNamingTheField) {
  struct Case {
    json frame;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{{"t", "shout"}}, "frames[0].t: expected out, err, in"},
      {{{"t", "out"}, {"d", "not base64!"}}, "frames[0].d: expected base64"},
      {{{"t", "sig"}}, "frames[0].n: missing"},
      {{{"t", "sig"}, {"n", 65}}, "frames[0].n: expected an integer in [1, 64]"},
      {{{"t", "winsz"}, {"rows", 0}, {"cols", 80}}, "frames[0].rows"},
      {{{"t", "exit"}, {"status", 256}}, "frames[0].status"},
      {{{"t", "exit"}, {"status", 0}, {"cpu_seconds", -1}}, "frames[0].cpu_seconds"},
      {json::array(), "frames[0]: expected an object"},
  };
  for (const Case& c : cases) {
    Result<std::vector<StepFrame>> decoded = DecodeFrames(json{{"frames", json::array({c.frame})}});
    ASSERT_FALSE(decoded.has_value()) << c.frame.dump();
    EXPECT_NE(decoded.error().message().find(c.expected), std::string::npos)
        << decoded.error().message();
  }
  EXPECT_FALSE(DecodeFrames(json{{"frames", 3}}).has_value());
  EXPECT_FALSE(DecodeFrames(json::array()).has_value());
}

TEST(StepFramesTest, TooManyFramesOrBytesAreRefused) {
  json many = json::array();
  for (size_t i = 0; i <= kMaxFramesPerMessage; ++i) many.push_back({{"t", "eof"}});
  EXPECT_FALSE(DecodeFrames(json{{"frames", many}}).has_value());
  const std::string big(kMaxFrameBytes + 3, 'x');
  EXPECT_FALSE(
      DecodeFrames(json{{"frames", {{{"t", "out"}, {"d", Base64Encode(big)}}}}}).has_value());
}

TEST(StepPageTest, RoundTripsAndNeedsNext) {
  const StepPage page{.frames = {StepFrame::Data(FrameKind::kStdout, "x")}, .next = 7, .end = true};
  Result<StepPage> back = DecodePage(EncodePage(page));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->frames, page.frames);
  EXPECT_EQ(back->next, 7);
  EXPECT_TRUE(back->end);
  EXPECT_FALSE(DecodePage(json{{"frames", json::array()}}).has_value());
}

TEST(StepOrderTest, RoundTripsAndChecksRanges) {
  const StepOrder order{.job = 12,
                        .step = 3,
                        .command = "orted -mca ess \"env\"",
                        .env = {{"SLURM_NODEID", "1"}},
                        .account = "nobody",
                        .cwd = "/tmp",
                        .pty = true,
                        .rows = 24,
                        .cols = 80,
                        .umask = 022,
                        .mem_limit_mb = 100,
                        .cpu_limit = 2};
  Result<StepOrder> back = DecodeStepOrder(EncodeStepOrder(order));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(EncodeStepOrder(*back), EncodeStepOrder(order));
  json bad = EncodeStepOrder(order);
  bad["step"] = 0;
  EXPECT_FALSE(DecodeStepOrder(bad).has_value());
  // Parsed text makes 0 an unsigned number: refused all the same (found by the fuzzer).
  EXPECT_FALSE(DecodeStepOrder(json::parse(R"({"job": 12, "step": 0})")).has_value());
  EXPECT_FALSE(DecodeStepKill(json::parse(R"({"job": 0})")).has_value());
  bad = EncodeStepOrder(order);
  bad["env"]["X"] = 1;
  EXPECT_FALSE(DecodeStepOrder(bad).has_value());

  Result<StepKill> kill = DecodeStepKill(json{{"job", 4}});
  ASSERT_TRUE(kill.has_value());
  EXPECT_EQ(kill->step, 0);  // absent: every step of the job
  EXPECT_FALSE(DecodeStepKill(json{{"job", 0}}).has_value());
  EXPECT_EQ(StepId(12, 3), "12.3");
}

TEST(HostSlotsTest, SluiceHostsReadsAsHostsAndSlotsInOrder) {
  using Hosts = std::vector<std::pair<std::string, int>>;
  EXPECT_EQ(ParseHostSlots("h1:2,h2:3"), (Hosts{{"h1", 2}, {"h2", 3}}));
  // A missing, unreadable or zero count is one slot; empty entries are skipped.
  EXPECT_EQ(ParseHostSlots("a,b:x,,c:0,d:1"), (Hosts{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}}));
  EXPECT_TRUE(ParseHostSlots("").empty());
}

}  // namespace
}  // namespace sluice::wire
