// Idempotent submissions (issue 19): a repeat with the same Idempotency-Key answers the
// original ids, also after a controller restart; the same key with another body is a 422;
// keys are per user and expire after 24 h.
#include "server/idempotency.h"

#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;

json OneJob(const std::string& command = "true") { return {{"command", command}}; }

json TwoJobs() { return {{"jobs", json::array({OneJob("a"), OneJob("b")})}}; }

TEST(IdempotencyTest, ARepeatedSubmissionAnswersTheOriginalId) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  Reply first = h.c().Submit(Caller{.user = "alice"}, OneJob(), "key-1");
  ASSERT_EQ(first.status, 200) << first.body.dump();
  Reply again = h.c().Submit(Caller{.user = "alice"}, OneJob(), "key-1");
  ASSERT_EQ(again.status, 200) << again.body.dump();
  EXPECT_EQ(again.body["id"], first.body["id"]);
  EXPECT_EQ(json::parse(Reply(h.c().ListJobs({})).text).size(), 1u) << "a second job";
  // Without a key, the same body is a new job.
  Reply fresh = h.c().Submit(Caller{.user = "alice"}, OneJob());
  ASSERT_EQ(fresh.status, 200);
  EXPECT_NE(fresh.body["id"], first.body["id"]);
}

TEST(IdempotencyTest, ABatchRepeatedAfterARestartAnswersTheSameIds) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  Reply first = h.c().SubmitBatch(Caller{.user = "alice"}, TwoJobs(), "batch-key");
  ASSERT_EQ(first.status, 200) << first.body.dump();
  Reply single = h.c().Submit(Caller{.user = "alice"}, OneJob(), "single-key");
  ASSERT_EQ(single.status, 200);
  h.Close();
  h.Advance(3600 * 1000);
  h.Open();
  Reply again = h.c().SubmitBatch(Caller{.user = "alice"}, TwoJobs(), "batch-key");
  ASSERT_EQ(again.status, 200) << again.body.dump();
  EXPECT_EQ(again.body["ids"], first.body["ids"]);
  Reply single_again = h.c().Submit(Caller{.user = "alice"}, OneJob(), "single-key");
  EXPECT_EQ(single_again.body["id"], single.body["id"]);
  // Nothing was added: the next new job takes id 4.
  EXPECT_EQ(h.Submit("alice", OneJob()), 4);
}

TEST(IdempotencyTest, TheSameKeyWithAnotherBodyIsRefused) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, OneJob("a"), "k")).status, 200);
  Reply other = h.c().Submit(Caller{.user = "alice"}, OneJob("b"), "k");
  EXPECT_EQ(other.status, 422);
  EXPECT_NE(other.body["error"].get<std::string>().find("Idempotency-Key"), std::string::npos);
  // A single job and a batch of that job differ too.
  Reply as_batch =
      h.c().SubmitBatch(Caller{.user = "alice"}, {{"jobs", json::array({OneJob("a")})}}, "k");
  EXPECT_EQ(as_batch.status, 422);
}

TEST(IdempotencyTest, KeysArePerUserAndExpireAfterADay) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  Reply alice = h.c().Submit(Caller{.user = "alice"}, OneJob(), "shared");
  Reply bob = h.c().Submit(Caller{.user = "bob"}, OneJob(), "shared");
  ASSERT_EQ(alice.status, 200);
  ASSERT_EQ(bob.status, 200);
  EXPECT_NE(alice.body["id"], bob.body["id"]);
  h.Advance((IdempotencyKeys::kTtlSeconds + 1) * 1000);
  Reply later = h.c().Submit(Caller{.user = "alice"}, OneJob(), "shared");
  ASSERT_EQ(later.status, 200);
  EXPECT_NE(later.body["id"], alice.body["id"]);
}

TEST(IdempotencyTest, MalformedKeysAreA400) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, OneJob(), "has space")).status, 400);
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, OneJob(), std::string(201, 'k'))).status, 400);
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, OneJob(), "\xff")).status, 400);
}

TEST(IdempotencyTest, ARefusedSubmissionLeavesNoKey) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  Reply refused = h.c().Submit(Caller{.user = "alice"}, {{"command", "x"}, {"queue", "nope"}}, "k");
  EXPECT_EQ(refused.status, 400);
  Reply other = h.c().Submit(Caller{.user = "alice"}, OneJob(), "k");
  EXPECT_EQ(other.status, 200) << other.body.dump();
}

TEST(IdempotencyKeysTest, AUserKeepsABoundedNumberOfKeys) {
  IdempotencyKeys keys;
  std::vector<json> specs = {OneJob()};
  const std::string digest = IdempotencyKeys::Digest(specs, false);
  for (size_t i = 0; i <= IdempotencyKeys::kMaxPerUser; ++i) {
    const std::string key = "k" + std::to_string(i);
    keys.Begin("alice", key, digest, static_cast<Instant>(i), specs);
    keys.Finish("alice", key, {static_cast<JobId>(i + 1)});
  }
  EXPECT_EQ(keys.size(), IdempotencyKeys::kMaxPerUser);
  EXPECT_EQ(keys.Find("alice", "k0", digest, 100).found, IdempotencyKeys::Found::kNone);
  EXPECT_EQ(keys.Find("alice", "k1", digest, 100).found, IdempotencyKeys::Found::kDone);
}

}  // namespace
}  // namespace sluice::server
