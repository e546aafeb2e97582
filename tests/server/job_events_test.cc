// A job's events (issue 47.6): the runs a requeue would erase and the changes, kept in the
// row, give its history rows and its timeline.
#include "server/job_events.h"

#include <gtest/gtest.h>

namespace sluice::server {
namespace {

using nlohmann::json;

store::StoredJob RunningRow() {
  return store::StoredJob{.id = 7,
                          .spec = R"({"user":"alice"})",
                          .state = "RUNNING",
                          .submit_time = 100,
                          .start_time = 110,
                          .allocation = R"({"hosts":[{"host":"h1","slots":2}]})"};
}

wire::HistoryEntry EntryOf(const store::StoredJob& row) {
  return wire::HistoryEntry{.id = row.id,
                            .user = "alice",
                            .state = row.state,
                            .submit_time = row.submit_time,
                            .start_time = row.start_time,
                            .end_time = row.end_time};
}

// Requeue the running row at `at`, then it starts again at `restart`.
void RequeueAndRestart(store::StoredJob& row, int64_t at, int64_t restart, const char* why) {
  NoteRequeue(row, at, why);
  row.state = "RUNNING";
  row.start_time = restart;
  row.allocation = R"({"hosts":[{"host":"h2","slots":2}]})";
}

TEST(JobEventsTest, ARequeuedRunBecomesAnEarlierRunAndTheWaitStartsAtTheRequeue) {
  store::StoredJob row = RunningRow();
  RequeueAndRestart(row, 150, 170, "host h1 lost");
  row.state = "DONE";
  row.end_time = 200;
  row.exit_code = 0;
  const std::vector<wire::HistoryEntry> runs = JobRuns(row, EntryOf(row));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].state, wire::kRequeuedRun);
  EXPECT_EQ(runs[0].run, 1);
  EXPECT_EQ(runs[0].cause, "host h1 lost");
  EXPECT_EQ(runs[0].start_time, 110);
  EXPECT_EQ(runs[0].end_time, 150);
  EXPECT_EQ(runs[0].WaitSeconds(), 10);  // from the submission
  EXPECT_EQ(runs[0].RunSeconds(), 40);
  ASSERT_EQ(runs[0].hosts.size(), 1u);
  EXPECT_EQ(runs[0].hosts[0], (std::pair<std::string, int32_t>("h1", 2)));
  EXPECT_EQ(runs[0].slots, 2);
  EXPECT_EQ(runs[1].state, "DONE");
  EXPECT_EQ(runs[1].run, 2);
  EXPECT_EQ(runs[1].queued_time, 150);
  EXPECT_EQ(runs[1].WaitSeconds(), 20);  // from the requeue, not the submission (was 70)
  EXPECT_EQ(RequeuesOf(row).queued_time, 150);
  EXPECT_EQ(RequeuesOf(row).count, 1);
}

TEST(JobEventsTest, TheTimelineTellsSubmitStartsRequeueChangesAndEndInOrder) {
  store::StoredJob row = RunningRow();
  row.start_time = 0;
  row.allocation.clear();
  row.state = "HELD";
  AppendJobEvent(row, {{"event", "hold"}, {"time", 101}, {"by", "alice"}});
  AppendJobEvent(row, {{"event", "modify"}, {"time", 102}, {"by", "alice"}, {"changes", "x"}});
  AppendJobEvent(row, {{"event", "release"}, {"time", 103}, {"by", "root"}});
  row.state = "RUNNING";
  row.start_time = 110;
  row.allocation = R"({"hosts":[{"host":"h1","slots":2}]})";
  RequeueAndRestart(row, 150, 170, "by root");
  row.state = "EXIT";
  row.end_time = 200;
  row.exit_code = 3;
  row.cause = "NON_ZERO_EXIT";
  const json timeline = JobTimeline(row);
  std::vector<std::string> events;
  std::vector<int64_t> times;
  for (const json& e : timeline) {
    events.push_back(e["event"]);
    times.push_back(e["time"]);
  }
  EXPECT_EQ(events, (std::vector<std::string>{"submit", "hold", "modify", "release", "start",
                                              "requeue", "start", "end"}))
      << timeline.dump();
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end())) << timeline.dump();
  EXPECT_EQ(timeline[4]["hosts"], json::parse(R"([["h1", 2]])"));
  EXPECT_EQ(timeline[6]["hosts"], json::parse(R"([["h2", 2]])"));
  EXPECT_EQ(timeline[5]["why"], "by root");
  EXPECT_EQ(timeline[7]["state"], "EXIT");
  EXPECT_EQ(timeline[7]["exit_code"], 3);
  EXPECT_EQ(timeline[7]["cause"], "NON_ZERO_EXIT");
}

TEST(JobEventsTest, AnEndedJobSubmittedAgainKeepsItsEndInTheEarlierRun) {
  store::StoredJob row = RunningRow();
  row.state = "EXIT";
  row.end_time = 130;
  row.exit_code = 1;
  NoteRequeue(row, 500, "by alice");
  row.state = "PENDING";
  row.start_time = row.end_time = 0;
  row.allocation.clear();
  row.exit_code.reset();
  const std::vector<wire::HistoryEntry> runs = JobRuns(row, EntryOf(row));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].end_time, 130);  // when it ended, not when it was submitted again
  ASSERT_TRUE(runs[0].exit_code.has_value());
  EXPECT_EQ(*runs[0].exit_code, 1);
  EXPECT_EQ(runs[0].message, "ended EXIT, then requeued");
  const json timeline = JobTimeline(row);
  ASSERT_EQ(timeline.size(), 4u) << timeline.dump();  // submit, start, end, requeue
  EXPECT_EQ(timeline[2]["event"], "end");
  EXPECT_EQ(timeline[3]["event"], "requeue");
}

TEST(JobEventsTest, TheOldestEventsGoBeyondTheCapAndBadTextReadsAsNone) {
  store::StoredJob row = RunningRow();
  for (int i = 0; i < static_cast<int>(kMaxJobEvents) + 10; ++i) {
    AppendJobEvent(row, {{"event", "hold"}, {"time", 1000 + i}, {"by", "a"}});
  }
  const std::vector<json> events = JobEvents(row);
  ASSERT_EQ(events.size(), kMaxJobEvents);
  EXPECT_EQ(events.front()["time"], 1010);
  // Changes never push a run out: its accounting stays.
  NoteRequeue(row, 2000, "host h1 lost");
  for (int i = 0; i < 200; ++i) AppendJobEvent(row, {{"event", "hold"}, {"time", 3000 + i}});
  EXPECT_EQ(RequeuesOf(row).count, 1);
  EXPECT_EQ(JobEvents(row).size(), kMaxJobEvents + 1);
  row.events = "{not json";
  EXPECT_TRUE(JobEvents(row).empty());
  EXPECT_EQ(RequeuesOf(row).queued_time, row.submit_time);
  EXPECT_EQ(JobRuns(row, EntryOf(row)).size(), 1u);
  AppendJobEvent(row, {{"event", "hold"}, {"time", 5}});  // replaces what it cannot read
  EXPECT_EQ(JobEvents(row).size(), 1u);
}

}  // namespace
}  // namespace sluice::server
