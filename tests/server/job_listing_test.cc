// Streamed listings (issue 45, job_listing.h): chunks of a GET /v1/jobs listing interleaved
// with submissions, cancellations and job ends still make one well-formed JSON array that
// lists each job at most once, every job that stayed in the book exactly once, each in its
// state when its chunk was copied; `limit` and errors behave as they did unstreamed.
#include "server/job_listing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "server/controller.h"
#include "server/controller_fixture.h"
#include "server/http_reply.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::LaunchedIds;

// A listing drained chunk by chunk; `between` runs after every chunk but the last.
struct Drained {
  std::string text;
  int chunks = 0;
};

template <typename Between>
Drained Drain(Controller& c, const std::map<std::string, std::string>& query,
              JobListing::Options options, Between between) {
  Result<std::unique_ptr<JobListing>> listing = c.OpenJobListing(query, options);
  EXPECT_TRUE(listing) << listing.error().ToString();
  Drained out;
  if (!listing) return out;
  while (!(*listing)->done()) {
    c.NextJobChunk(**listing, out.text);
    ++out.chunks;
    if (!(*listing)->done()) between(out.chunks);
  }
  return out;
}

std::vector<JobId> Ids(const json& jobs) {
  std::vector<JobId> ids;
  for (const json& job : jobs) ids.push_back(job["id"].get<JobId>());
  return ids;
}

class JobListingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.Open();
    ASSERT_EQ(h_.Register("h1").status, 200);
    for (int i = 0; i < 30; ++i) ids_.push_back(h_.Submit("alice", {{"command", "x"}}));
    h_.Cycle();
    running_ = LaunchedIds(h_.Heartbeat("h1"));  // h1's 4 slots: the first 4 jobs
    ASSERT_EQ(running_.size(), 4u);
    std::sort(running_.begin(), running_.end());
    h_.Heartbeat("h1", json(running_));
  }

  TempDir dir_;
  ControllerHarness h_{dir_.path().string()};
  std::vector<JobId> ids_;
  std::vector<JobId> running_;
};

TEST_F(JobListingTest, InterleavedSubmissionsAndEndsListEachJobOnceInWellFormedJson) {
  // Between chunks of 3 jobs: a new job, a pending job ahead of the listing cancelled, a
  // running job ahead of it ended, a job behind it cancelled.
  std::vector<JobId> submitted;
  const JobId cancelled_ahead = ids_[25];
  const JobId cancelled_behind = ids_[0 + 5];
  const JobId ended_ahead = running_[3];  // ids_[3]: in the second chunk
  Drained d = Drain(h_.c(), {}, {.jobs = 3, .visits = 3}, [&](int chunk) {
    if (chunk == 1) {
      EXPECT_EQ(Reply(h_.c().Cancel(Caller{.user = "alice"}, cancelled_ahead)).status, 200);
      const std::vector<JobId> still(running_.begin(), running_.begin() + 3);
      h_.Heartbeat("h1", json(still), Exited(ended_ahead, 3));
    }
    if (chunk == 3) {
      EXPECT_EQ(Reply(h_.c().Cancel(Caller{.user = "alice"}, cancelled_behind)).status, 200);
    }
    submitted.push_back(h_.Submit("alice", {{"command", "late"}}));
  });
  EXPECT_GE(d.chunks, 10) << "30 jobs in chunks of 3";
  const json jobs = json::parse(d.text, nullptr, false);
  ASSERT_TRUE(jobs.is_array()) << d.text;
  const std::vector<JobId> listed = Ids(jobs);
  const std::set<JobId> unique(listed.begin(), listed.end());
  EXPECT_EQ(unique.size(), listed.size()) << "a job listed twice: " << d.text;
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
  for (JobId id : ids_) EXPECT_EQ(unique.count(id), 1u) << "job " << id << " missing";
  for (JobId id : listed) {
    const bool known = std::count(ids_.begin(), ids_.end(), id) +
                       std::count(submitted.begin(), submitted.end(), id);
    EXPECT_TRUE(known) << "job " << id << " was never submitted";
  }
  // Each as it was when its chunk was copied.
  std::map<JobId, std::string> state;
  for (const json& job : jobs) state[job["id"]] = job["state"];
  EXPECT_EQ(state[cancelled_ahead], "CANCELLED");
  EXPECT_EQ(state[ended_ahead], "EXIT");
  EXPECT_EQ(state[cancelled_behind], "PENDING") << "listed before it was cancelled";
  EXPECT_EQ(h_.State(cancelled_behind), "CANCELLED");
}

TEST_F(JobListingTest, AFilteredListingSkipsAJobThatLeftTheFilterBeforeItsChunk) {
  const JobId leaves = ids_[20];
  Drained d = Drain(h_.c(), {{"state", "PENDING"}}, {.jobs = 2, .visits = 4}, [&](int chunk) {
    if (chunk == 1) {
      EXPECT_EQ(Reply(h_.c().Cancel(Caller{.user = "alice"}, leaves)).status, 200);
    }
  });
  const json jobs = json::parse(d.text, nullptr, false);
  ASSERT_TRUE(jobs.is_array()) << d.text;
  std::vector<JobId> expected(ids_.begin() + 4, ids_.end());  // the first 4 run
  std::erase(expected, leaves);
  EXPECT_EQ(Ids(jobs), expected);
}

TEST_F(JobListingTest, ChunkedListingEqualsTheWholeOne) {
  const std::string whole = Reply(h_.c().ListJobs({{"pending_reasons", "1"}})).text;
  for (size_t size : {1, 2, 7, 1000}) {
    SCOPED_TRACE(size);
    Drained d = Drain(h_.c(), {{"pending_reasons", "1"}}, {.jobs = size, .visits = size},
                      [](int) {});
    EXPECT_EQ(d.text, whole);
  }
  EXPECT_EQ(Ids(json::parse(whole)), ids_);
}

TEST_F(JobListingTest, LimitListsTheMostRecentMatchingJobsAcrossChunks) {
  const std::vector<JobId> last5(ids_.end() - 5, ids_.end());
  Drained d = Drain(h_.c(), {{"limit", "5"}}, {.jobs = 2, .visits = 2}, [](int) {});
  EXPECT_EQ(Ids(json::parse(d.text)), last5);
  // A filter the walk back must skip through: the 4 running jobs are the lowest ids.
  d = Drain(h_.c(), {{"limit", "3"}, {"state", "RUNNING"}}, {.jobs = 2, .visits = 2}, [](int) {});
  EXPECT_EQ(Ids(json::parse(d.text)), std::vector<JobId>(running_.begin() + 1, running_.end()));
  // More than match: every matching job; 0: none.
  d = Drain(h_.c(), {{"limit", "100"}, {"state", "RUNNING"}}, {.jobs = 3, .visits = 3}, [](int) {});
  EXPECT_EQ(Ids(json::parse(d.text)), running_);
  EXPECT_EQ(Reply(h_.c().ListJobs({{"limit", "0"}})).text, "[]");
  // Jobs submitted during the listing do not push it past `limit`.
  d = Drain(h_.c(), {{"limit", "4"}}, {.jobs = 1, .visits = 1},
            [&](int) { h_.Submit("alice", {{"command", "late"}}); });
  EXPECT_EQ(json::parse(d.text).size(), 4u) << d.text;
}

TEST_F(JobListingTest, BadQueriesAreRefusedBeforeAnyText) {
  for (const std::map<std::string, std::string>& query :
       std::vector<std::map<std::string, std::string>>{{{"queue", "nope"}},
                                                       {{"user", "nobody-known-here"}},
                                                       {{"fields", "id,colour"}},
                                                       {{"limit", "-2"}},
                                                       {{"colour", "red"}}}) {
    Result<std::unique_ptr<JobListing>> listing = h_.c().OpenJobListing(query);
    ASSERT_FALSE(listing) << query.begin()->first;
    EXPECT_EQ(listing.error().code(), StatusCode::kInvalidArgument);
  }
  // An empty listing of an existing user, and the empty book, are "[]".
  EXPECT_EQ(Reply(h_.c().ListJobs({{"user", "bob"}})).text, "[]");
  EXPECT_EQ(Reply(h_.c().ListJobs({{"state", "HELD"}})).text, "[]");
}

}  // namespace
}  // namespace sluice::server
