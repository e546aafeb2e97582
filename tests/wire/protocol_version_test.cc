// The wire protocol's version (R-OPS-5, wire/protocol_version.h): parsing, which peers a
// controller serves (its major from the previous minor on, and newer minors), the header's
// absence read as 1.0, and the refusal's body the agent recognises.
#include "wire/protocol_version.h"

#include <gtest/gtest.h>

#include <string_view>

namespace sluice::wire {
namespace {

TEST(ProtocolVersionTest, ParsesMajorDotMinorAndRefusesAnythingElse) {
  Result<ProtocolVersion> parsed = ParseProtocolVersion("1.12");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, (ProtocolVersion{1, 12}));
  EXPECT_EQ(ToString(*parsed), "1.12");
  for (std::string_view bad : {"", "1", "1.", ".1", "1.2.3", "a.b", "-1.0", "1.-1", "99999.0",
                               "1 .0", "1.0 ", "\x01.\x02"}) {
    SCOPED_TRACE(bad);
    Result<ProtocolVersion> refused = ParseProtocolVersion(bad);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
  }
}

TEST(ProtocolVersionTest, AControllerServesItsMajorFromThePreviousMinorOn) {
  struct Case {
    std::string_view name;
    ProtocolVersion peer;
    ProtocolVersion ours;
    bool served;
  };
  const Case cases[] = {
      {"the same version", {1, 1}, {1, 1}, true},
      {"the previous minor", {1, 0}, {1, 1}, true},
      {"two minors back", {1, 1}, {1, 3}, false},
      {"a newer minor", {1, 4}, {1, 1}, true},
      {"a newer major", {2, 0}, {1, 1}, false},
      {"an older major", {1, 9}, {2, 0}, false},
      {"minor 0 serves minor 0", {2, 0}, {2, 0}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Status status = CheckServed(c.peer, c.ours);
    EXPECT_EQ(status.ok(), c.served) << status.ToString();
    if (!c.served) {
      EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
    }
  }
}

TEST(ProtocolVersionTest, ARequestWithoutTheHeaderIsThePreviousMinorAndServed) {
  EXPECT_EQ(kUnversionedProtocol, (ProtocolVersion{1, 0}));
  EXPECT_TRUE(CheckProtocolHeader("").ok());
  EXPECT_TRUE(CheckProtocolHeader(ToString(kProtocolVersion)).ok());
  EXPECT_EQ(CheckProtocolHeader("2.0").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(CheckProtocolHeader("one").code(), StatusCode::kInvalidArgument);
}

TEST(ProtocolVersionTest, TheRefusalsBodyIsRecognisedAndNothingElseIs) {
  const nlohmann::json body = ProtocolRefusalBody(CheckServed({2, 0}));
  EXPECT_TRUE(IsProtocolRefusal(body));
  EXPECT_EQ(body["protocol"], ToString(kProtocolVersion));
  EXPECT_EQ(body["error"], CheckServed({2, 0}).message());
  EXPECT_FALSE(IsProtocolRefusal(nlohmann::json{{"error", "gpus: unknown field"}}));
  EXPECT_FALSE(IsProtocolRefusal(nlohmann::json{{"cause", 7}}));  // never throws
  EXPECT_FALSE(IsProtocolRefusal(nlohmann::json::array()));
  EXPECT_FALSE(IsProtocolRefusal(nlohmann::json()));
}

}  // namespace
}  // namespace sluice::wire
