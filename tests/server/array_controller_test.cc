// Job arrays in the controller (R-UX-3): submission through the API (`array`, validated),
// elements launched as ID[INDEX] with SLUICE_ARRAY_ID/SLUICE_ARRAY_INDEX and %A/%a in their
// output names, the %N cap, element and array JSON, cancel/hold/release of an array, an
// element or a range, done(ID), and a restart restoring the array (ArrayRestored) so that
// every element runs exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/array_ids.h"
#include "server/controller_fixture.h"
#include "server/job_arrays.h"
#include "wire/output_pattern.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::LaunchedIds;

class ArrayControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open();
    ASSERT_EQ(h_->Register("h1").status, 200);
    ASSERT_EQ(h_->Register("h2").status, 200);
  }

  // One scheduling pass; the launches both hosts receive, reported back as running.
  std::vector<json> CycleAndLaunch() {
    h_->Cycle();
    std::vector<json> launches;
    for (const char* host : {"h1", "h2"}) {
      const json reply = h_->Heartbeat(host, Running(host));
      for (const json& l : reply["launch"]) {
        launches.push_back(l);
        running_[host].insert(l["job"].get<JobId>());
      }
      h_->Heartbeat(host, Running(host));
    }
    return launches;
  }

  json Running(const std::string& host) {
    json ids = json::array();
    for (JobId id : running_[host]) ids.push_back(id);
    return ids;
  }

  // Every running element reports exit 0; returns how many ended.
  size_t FinishAll() {
    size_t ended = 0;
    for (auto& [host, ids] : running_) {
      for (JobId id : std::set<JobId>(ids)) {
        ids.erase(id);
        h_->Heartbeat(host, Running(host), Exited(id));
        ++ended;
      }
    }
    return ended;
  }

  Reply Act(JobId id, const std::string& index, ArrayAction action) {
    Result<std::pair<int32_t, int32_t>> range = ParseIndexRange(index);
    EXPECT_TRUE(range) << range.error().ToString();
    return h_->c().ActOnElements(Caller{.user = "alice"}, id, range->first, range->second, action);
  }

  json Counts(JobId id) { return h_->Job(id)["elements"]; }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
  std::map<std::string, std::set<JobId>> running_;
};

TEST_F(ArrayControllerTest, ABadOrTooLargeArrayIsRefusedNamingTheField) {
  Reply bad = h_->c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"array", "1-x"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.dump().find("job.array"), std::string::npos) << bad.body;
  Reply wrong_type = h_->c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"array", 5}});
  EXPECT_EQ(wrong_type.status, 400);
  Reply huge =
      h_->c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"array", "1-2000000"}});
  EXPECT_EQ(huge.status, 400);
  EXPECT_NE(huge.body.dump().find("limit of 1000000"), std::string::npos) << huge.body;
}

TEST_F(ArrayControllerTest, ElementsRunUnderTheCapWithTheirIndexInEnvAndOutputName) {
  const JobId id = h_->Submit(
      "alice",
      {{"command", "true"}, {"array", "1-6%2"}, {"output", "/tmp/out.%A_%a"}, {"name", "sweep"}});
  std::vector<json> launches = CycleAndLaunch();
  ASSERT_EQ(launches.size(), 2u) << h_->log();
  std::set<int32_t> seen;
  for (const json& l : launches) {
    const JobId element = l["job"].get<JobId>();
    ASSERT_TRUE(IsArrayElement(element));
    EXPECT_EQ(ArrayIdOf(element), id);
    const std::string index = std::to_string(ArrayIndexOf(element));
    EXPECT_EQ(l["env"]["SLUICE_ARRAY_ID"], std::to_string(id));
    EXPECT_EQ(l["env"]["SLUICE_ARRAY_INDEX"], index);
    EXPECT_EQ(l["output"], "/tmp/out." + std::to_string(id) + "_" + index);
    seen.insert(ArrayIndexOf(element));
  }
  EXPECT_EQ(seen, (std::set<int32_t>{1, 2}));  // index order
  // An element's object: the array's id and its index; the array's: counts by state.
  const json element = h_->Job(ArrayElementId(id, 1));
  EXPECT_EQ(element["id"], id);
  EXPECT_EQ(element["index"], 1);
  EXPECT_EQ(element["state"], "RUNNING");
  const json waiting = h_->Job(ArrayElementId(id, 6));
  EXPECT_EQ(waiting["index"], 6);
  EXPECT_EQ(waiting["state"], "PENDING");
  EXPECT_EQ(h_->Job(id)["array"], "1-6%2");
  EXPECT_EQ(Counts(id)["RUNNING"], 2);
  EXPECT_EQ(Counts(id)["PENDING"], 4);
  EXPECT_EQ(h_->State(id), "RUNNING");
  // The cap holds while slots are free (8 slots, 2 used).
  EXPECT_TRUE(CycleAndLaunch().empty());
  std::set<int32_t> ran = seen;
  for (int round = 0; round < 5 && ran.size() < 6; ++round) {
    FinishAll();
    for (const json& l : CycleAndLaunch()) {
      EXPECT_TRUE(ran.insert(ArrayIndexOf(l["job"].get<JobId>())).second) << "ran twice";
    }
  }
  FinishAll();
  h_->Cycle();
  EXPECT_EQ(ran, (std::set<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(h_->State(id), "DONE");
  EXPECT_EQ(Counts(id)["DONE"], 6);
}

TEST_F(ArrayControllerTest, CancelHoldAndReleaseAnElementARangeAndTheArray) {
  const JobId id = h_->Submit("alice", {{"command", "true"}, {"array", "1-10%2"}});
  ASSERT_EQ(CycleAndLaunch().size(), 2u);  // 1 and 2 run
  Reply range = Act(id, "2-5", ArrayAction::kCancel);
  ASSERT_EQ(range.status, 200) << range.body;
  EXPECT_EQ(range.body["changed"], 4);  // 2 (running: killed) and 3-5
  EXPECT_EQ(h_->State(ArrayElementId(id, 2)), "CANCELLED");
  EXPECT_EQ(h_->State(ArrayElementId(id, 4)), "CANCELLED");
  EXPECT_EQ(h_->State(ArrayElementId(id, 1)), "RUNNING");
  Reply held = h_->c().Hold(Caller{.user = "alice"}, ArrayElementId(id, 7), true);
  ASSERT_EQ(held.status, 200) << held.body;
  EXPECT_EQ(h_->State(ArrayElementId(id, 7)), "HELD");
  EXPECT_EQ(Act(id, "2-5", ArrayAction::kCancel).status, 409);  // nothing left to cancel
  EXPECT_EQ(Act(id, "40-50", ArrayAction::kCancel).status, 404);
  Reply other = h_->c().ActOnElements(Caller{.user = "bob"}, id, 6, 6, ArrayAction::kCancel);
  EXPECT_EQ(other.status, 403);
  // The kill of 2 reaches h1 or h2; element 6 then runs (7 is held).
  FinishAll();
  std::set<int32_t> started;
  for (const json& l : CycleAndLaunch()) started.insert(ArrayIndexOf(l["job"].get<JobId>()));
  EXPECT_EQ(started, (std::set<int32_t>{6, 8}));
  EXPECT_EQ(Reply(h_->c().Hold(Caller{.user = "alice"}, ArrayElementId(id, 7), false)).status, 200);
  Reply all = h_->c().Cancel(Caller{.user = "alice"}, id);
  ASSERT_EQ(all.status, 200) << all.body;
  FinishAll();
  h_->Cycle();
  EXPECT_EQ(h_->State(id), "CANCELLED");
  EXPECT_EQ(Counts(id)["CANCELLED"], 9);  // all but 1, which ran to its end before
  EXPECT_EQ(Counts(id)["DONE"], 1);
}

TEST_F(ArrayControllerTest, DoneOfTheArrayWaitsForEveryElement) {
  const JobId id = h_->Submit("alice", {{"command", "true"}, {"array", "1-3"}});
  const JobId after =
      h_->Submit("alice", {{"command", "true"}, {"depend", "done(" + std::to_string(id) + ")"}});
  ASSERT_EQ(CycleAndLaunch().size(), 3u);
  EXPECT_EQ(h_->State(after), "PENDING");
  JobId first = *running_["h1"].begin();
  running_["h1"].erase(first);
  h_->Heartbeat("h1", Running("h1"), Exited(first));
  EXPECT_TRUE(CycleAndLaunch().empty());
  EXPECT_EQ(h_->State(after), "PENDING");
  FinishAll();
  std::vector<json> launches = CycleAndLaunch();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0]["job"], after);
}

// Issue 47.5: in a listing the array's own object stands for its elements that have no
// object of their own yet — PENDING while some wait — and is never a RUNNING job beside its
// running elements; once every element has its own it is not listed. `arrays=1` (jobs -A)
// and GET /v1/jobs/ID keep the aggregate state.
TEST_F(ArrayControllerTest, AListingShowsTheArrayObjectOnlyForItsWaitingElements) {
  const JobId id = h_->Submit("alice", {{"command", "true"}, {"array", "1-10%2"}});
  ASSERT_EQ(CycleAndLaunch().size(), 2u);
  const auto listed = [&](std::map<std::string, std::string> query) {
    std::map<std::string, std::string> states;  // JOBID text -> state
    for (const json& job : Reply(h_->c().ListJobs(query)).Json()) {
      states[job.contains("index") ? std::to_string(job["id"].get<JobId>()) + "[" +
                                         std::to_string(job["index"].get<int>()) + "]"
                                   : std::to_string(job["id"].get<JobId>())] = job["state"];
    }
    return states;
  };
  const std::string array = std::to_string(id);
  std::map<std::string, std::string> all = listed({});
  EXPECT_EQ(all[array], "PENDING");  // its 8 waiting elements
  EXPECT_EQ(all[array + "[1]"], "RUNNING");
  EXPECT_EQ(all[array + "[2]"], "RUNNING");
  EXPECT_FALSE(listed({{"state", "RUNNING"}}).contains(array));
  EXPECT_TRUE(listed({{"state", "PENDING"}}).contains(array));
  EXPECT_EQ(listed({{"arrays", "1"}})[array], "RUNNING");  // jobs -A: the aggregate
  EXPECT_EQ(h_->State(id), "RUNNING");                     // what done(ID) reads
  const Result<JobPage> page = h_->c().ListJobPage({{"offset", "0"}, {"state", "RUNNING"}});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->total, 2) << page->text;  // the two elements, not the array
  // Once every element ran (each has its own object), the array's object is not listed.
  for (int round = 0; round < 5; ++round) {
    FinishAll();
    CycleAndLaunch();
  }
  FinishAll();
  all = listed({});
  EXPECT_FALSE(all.contains(array)) << Reply(h_->c().ListJobs({})).Json().dump();
  EXPECT_EQ(all[array + "[10]"], "DONE");
}

TEST_F(ArrayControllerTest, ARestartRestoresTheArrayAndEveryElementRunsOnce) {
  const JobId id = h_->Submit("alice", {{"command", "true"}, {"array", "0-9:1%3"}});
  std::multiset<int32_t> ran;
  for (const json& l : CycleAndLaunch()) ran.insert(ArrayIndexOf(l["job"].get<JobId>()));
  ASSERT_EQ(ran.size(), 3u);
  // One ends, one element waiting is held; then the controller restarts.
  JobId ended = *running_["h1"].begin();
  running_["h1"].erase(ended);
  h_->Heartbeat("h1", Running("h1"), Exited(ended));
  ASSERT_EQ(Act(id, "9", ArrayAction::kHold).status, 200);
  const json before = Counts(id);
  h_->Close();
  h_->Open();
  ASSERT_EQ(h_->Register("h1", Running("h1")).status, 200);
  ASSERT_EQ(h_->Register("h2", Running("h2")).status, 200);
  EXPECT_EQ(Counts(id), before) << h_->log();
  EXPECT_EQ(h_->State(ArrayElementId(id, 9)), "HELD");
  EXPECT_EQ(h_->State(id), "RUNNING");
  // The rest run, each once, under the cap.
  for (int round = 0; round < 8; ++round) {
    FinishAll();
    for (const json& l : CycleAndLaunch()) ran.insert(ArrayIndexOf(l["job"].get<JobId>()));
    size_t running = running_["h1"].size() + running_["h2"].size();
    EXPECT_LE(running, 3u);
  }
  ASSERT_EQ(Act(id, "9", ArrayAction::kRelease).status, 200);
  for (int round = 0; round < 2; ++round) {
    FinishAll();
    for (const json& l : CycleAndLaunch()) ran.insert(ArrayIndexOf(l["job"].get<JobId>()));
  }
  FinishAll();
  h_->Cycle();
  EXPECT_EQ(ran, (std::multiset<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(h_->State(id), "DONE");
  // A plain job submitted now gets the next id, not one after the elements' packed ids.
  EXPECT_EQ(h_->Submit("alice", {{"command", "true"}}), id + 1);
}

TEST(ArrayTextTest, StatesIndexRangesAndOutputNames) {
  using core::ElementState;
  const std::vector<ElementState> states = {ElementState::kDone, ElementState::kDone,
                                            ElementState::kQueued, ElementState::kWaiting};
  EXPECT_EQ(EncodeElementStates(states), "2D1Q1W");
  EXPECT_EQ(*DecodeElementStates("2D1Q1W", 4), states);
  EXPECT_FALSE(DecodeElementStates("2D1Q", 4));
  EXPECT_FALSE(DecodeElementStates("2X2W", 4));
  EXPECT_FALSE(DecodeElementStates("9W", 4));
  EXPECT_EQ(*ParseIndexRange("3"), std::make_pair(3, 3));
  EXPECT_EQ(*ParseIndexRange("2-7"), std::make_pair(2, 7));
  EXPECT_FALSE(ParseIndexRange("7-2"));
  EXPECT_FALSE(ParseIndexRange("a"));
  EXPECT_FALSE(ParseIndexRange(""));
  const JobId element = ArrayElementId(12, 3);
  EXPECT_EQ(wire::ExpandOutputPattern("o.%A_%a.%j.%J.%I.%%", element), "o.12_3.12.12.3.%%");
  EXPECT_EQ(wire::ExpandOutputPattern("o.%j.%a%", 7), "o.7.0%");
}

}  // namespace
}  // namespace sluice::server
