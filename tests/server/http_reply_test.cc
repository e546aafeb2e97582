// The one mapping from the controller's outcomes to HTTP (http_reply.h): every Status code and
// every refusal kind has its status, and a reply carries the message (and a refusal's cause).
#include "server/http_reply.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

namespace sluice::server {
namespace {

struct Case {
  std::string_view name;
  StatusCode code;
  int http;
};

constexpr Case kCases[] = {
    {"ok", StatusCode::kOk, 200},
    {"invalid_argument", StatusCode::kInvalidArgument, 400},
    {"not_found", StatusCode::kNotFound, 404},
    {"already_exists", StatusCode::kAlreadyExists, 409},
    {"failed_precondition", StatusCode::kFailedPrecondition, 409},
    {"out_of_range", StatusCode::kOutOfRange, 400},
    {"resource_exhausted", StatusCode::kResourceExhausted, 413},
    {"permission_denied", StatusCode::kPermissionDenied, 403},
    {"unauthenticated", StatusCode::kUnauthenticated, 401},
    {"unavailable", StatusCode::kUnavailable, 503},
    {"internal", StatusCode::kInternal, 500},
};

TEST(HttpReplyTest, EveryStatusCodeHasItsHttpStatus) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(HttpStatusOf(c.code), c.http);
  }
}

TEST(HttpReplyTest, TheTableNamesEveryStatusCode) {
  std::set<StatusCode> named;
  for (const Case& c : kCases) named.insert(c.code);
  // The enumerators run from kOk to kInternal without gaps.
  for (int i = 0; i <= static_cast<int>(StatusCode::kInternal); ++i) {
    EXPECT_TRUE(named.contains(static_cast<StatusCode>(i))) << ToString(static_cast<StatusCode>(i));
  }
  EXPECT_EQ(named.size(), static_cast<size_t>(StatusCode::kInternal) + 1);
}

TEST(HttpReplyTest, AnErrorReplyCarriesTheCodesStatusAndTheMessage) {
  for (const Case& c : kCases) {
    if (c.code == StatusCode::kOk) continue;
    SCOPED_TRACE(c.name);
    const Reply reply = ErrorReply(Status(c.code, "job 7: no"));
    EXPECT_EQ(reply.status, c.http);
    EXPECT_EQ(reply.body["error"], "job 7: no");
  }
}

TEST(HttpReplyTest, ASuccessfulResultKeepsItsValueAndTheGivenStatus) {
  const Reply created = ReplyOf(nlohmann::json{{"id", 3}}, 201);
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(created.body["id"], 3);
  const Reply refused = ReplyOf(Result<nlohmann::json>(NotFound("no job 3")), 201);
  EXPECT_EQ(refused.status, 404);
}

struct RefusalCase {
  RefusalKind kind;
  int http;
};

constexpr RefusalCase kRefusals[] = {
    {RefusalKind::kNeverRuns, 422},   {RefusalKind::kNotModified, 422},
    {RefusalKind::kKeyReused, 422},   {RefusalKind::kKeyInFlight, 409},
    {RefusalKind::kOverQuota, 429},
};

TEST(HttpReplyTest, EveryRefusalKindHasItsHttpStatusAndName) {
  std::set<RefusalKind> named;
  for (const RefusalCase& c : kRefusals) {
    SCOPED_TRACE(ToString(c.kind));
    EXPECT_EQ(HttpStatusOf(c.kind), c.http);
    EXPECT_NE(ToString(c.kind), "?");
    named.insert(c.kind);
  }
  // The enumerators run from kNeverRuns to kKeyInFlight without gaps.
  EXPECT_EQ(named.size(), static_cast<size_t>(RefusalKind::kKeyInFlight) + 1);
}

TEST(HttpReplyTest, ARefusalCarriesItsMessageAndCauseAndNoCauseWhenItHasNone) {
  const Reply quota = ReplyOf(Refusal{.kind = RefusalKind::kOverQuota,
                                      .message = "jobs: queue 'normal' would hold 3",
                                      .cause = {{"reason", "QUOTA"}, {"max", 2}}},
                              201);
  EXPECT_EQ(quota.status, 429);
  EXPECT_EQ(quota.body["error"], "jobs: queue 'normal' would hold 3");
  EXPECT_EQ(quota.body["cause"]["reason"], "QUOTA");
  const Reply key = ReplyOf(Refusal{.kind = RefusalKind::kKeyInFlight, .message = "retry"});
  EXPECT_EQ(key.status, 409);
  EXPECT_FALSE(key.body.contains("cause"));
}

TEST(HttpReplyTest, AListingIsSentAsItsTextOrItsFailure) {
  const Reply listing = Reply(Result<std::string>(std::string("[1,2]")));
  EXPECT_EQ(listing.status, 200);
  EXPECT_EQ(listing.text, "[1,2]");
  const Reply failed = Reply(Result<std::string>(InvalidArgument("limit: bad")));
  EXPECT_EQ(failed.status, 400);
  EXPECT_EQ(failed.body["error"], "limit: bad");
}

}  // namespace
}  // namespace sluice::server
