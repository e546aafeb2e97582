// `sluice history` output: --csv is RFC 4180 (read back by an independent CSV reader: commas,
// quotes and newlines in fields survive), the table and the summary, and --since/--until.
#include "client/history_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/array_ids.h"
#include "client/text_fields.h"

namespace sluice::client {
namespace {

using Record = std::vector<std::string>;

// A CSV reader written from RFC 4180 section 2: records end with CRLF; a field is quoted
// when it holds a comma, quote or line break; a quote inside is doubled.
std::vector<Record> ReadCsv(const std::string& text) {
  std::vector<Record> records;
  Record record;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      ++i;
    } else {
      field += c;
    }
  }
  EXPECT_TRUE(field.empty() && record.empty()) << "the last record must end with CRLF";
  return records;
}

wire::HistoryEntry Entry() {
  return wire::HistoryEntry{.id = 7,
                            .name = "a \"quoted\", name\nwith a line break",
                            .user = "alice",
                            .queue = "normal",
                            .state = "EXIT",
                            .exit_code = 3,
                            .cause = "NON_ZERO_EXIT",
                            .submit_time = 1'700'000'000,
                            .start_time = 1'700'000'010,
                            .end_time = 1'700'000'070,
                            .slots = 4,
                            .hosts = {{"h1", 2}, {"h2", 2}},
                            .cpu_seconds = 12.5};
}

TEST(HistoryFormatTest, CsvReadsBackWithACsvReader) {
  wire::HistoryEntry never_started{.id = 8,
                                   .user = "bob",
                                   .queue = "normal",
                                   .state = "CANCELLED",
                                   .submit_time = 1'700'000'000,
                                   .end_time = 1'700'000'005};
  const std::string csv = FormatHistoryCsv({Entry(), never_started});
  const std::vector<Record> records = ReadCsv(csv);
  ASSERT_EQ(records.size(), 3u) << csv;
  EXPECT_EQ(records[0], HistoryColumns());
  for (const Record& r : records) EXPECT_EQ(r.size(), HistoryColumns().size());
  const Record& a = records[1];
  EXPECT_EQ(a[0], "7");
  EXPECT_EQ(a[1], Entry().name);
  EXPECT_EQ(a[4], "EXIT");
  EXPECT_EQ(a[5], "3");
  EXPECT_EQ(a[6], "NON_ZERO_EXIT");
  EXPECT_EQ(a[10], "10");  // wait
  EXPECT_EQ(a[11], "60");  // run
  EXPECT_EQ(a[12], "4");
  EXPECT_EQ(a[13], "h1:2,h2:2");
  EXPECT_EQ(a[14], "12.50");
  EXPECT_EQ(a[15], "");  // max_rss_mb not recorded
  const Record& b = records[2];
  EXPECT_EQ(b[8], "");    // never started
  EXPECT_EQ(b[10], "5");  // waited until its end
  EXPECT_EQ(b[11], "0");
}

// R-LAUNCH-2: each step is a record after its job's, `ID.N`, in the job's columns.
TEST(HistoryFormatTest, CsvListsEachStepAfterItsJob) {
  wire::HistoryEntry job = Entry();
  job.steps = {{.step = 1,
                .host = "h1",
                .command = "echo \"a,b\"",
                .start_time = 1'700'000'011,
                .end_time = 1'700'000'015,
                .exit_code = 0,
                .cpu_seconds = 0.014,
                .max_rss_mb = 3.6,
                .state = "COMPLETED"},
               {.step = 2,
                .host = "h2",
                .command = "sleep 99",
                .start_time = 1'700'000'020,
                .end_time = 1'700'000'070,
                .exit_code = 137,
                .signal = 9,
                .state = "CANCELLED"}};
  wire::HistoryEntry next{.id = 8, .user = "bob", .queue = "normal", .state = "DONE",
                          .end_time = 1'700'000'080};
  const std::string csv = FormatHistoryCsv({job, next});
  const std::vector<Record> records = ReadCsv(csv);
  ASSERT_EQ(records.size(), 5u) << csv;  // header, job 7, 7.1, 7.2, job 8
  for (const Record& r : records) ASSERT_EQ(r.size(), HistoryColumns().size()) << csv;
  EXPECT_EQ(records[1][0], "7");
  EXPECT_EQ(records[4][0], "8");
  const Record want_1 = {"7.1", "echo \"a,b\"", "alice", "normal", "COMPLETED", "0", "", "",
                         LocalIsoTime(1'700'000'011), LocalIsoTime(1'700'000'015), "", "4", "",
                         "h1", "0.01", "4", ""};
  EXPECT_EQ(records[2], want_1);
  const Record want_2 = {"7.2", "sleep 99", "alice", "normal", "CANCELLED", "137", "", "",
                         LocalIsoTime(1'700'000'020), LocalIsoTime(1'700'000'070), "", "50", "",
                         "h2", "", "", "killed by signal 9"};
  EXPECT_EQ(records[3], want_2);
  // A step still running has no end and no run time yet.
  job.steps = {{.step = 1, .host = "h1", .command = "x", .start_time = 1'700'000'011,
                .state = "RUNNING"}};
  const Record running = ReadCsv(FormatHistoryCsv({job}))[2];
  EXPECT_EQ(running[0], "7.1");
  EXPECT_EQ(running[5], "");   // exit
  EXPECT_EQ(running[9], "");   // end
  EXPECT_EQ(running[11], "");  // run
  // The table lists the steps too.
  const std::string table = FormatHistoryTable({job});
  EXPECT_NE(table.find("\n7.1 "), std::string::npos) << table;
}

TEST(HistoryFormatTest, TableAndSummaryShowTheColumns) {
  const std::string table = FormatHistoryTable({Entry()});
  EXPECT_NE(table.find("ID"), std::string::npos);
  EXPECT_NE(table.find("NON_ZERO_EXIT"), std::string::npos);
  EXPECT_NE(table.find("h1:2,h2:2"), std::string::npos);
  wire::HistorySummary summary;
  summary.Add(Entry());
  const std::string text = FormatHistorySummary(wire::HistorySummaryJson(summary));
  EXPECT_NE(text.find("alice"), std::string::npos);
  EXPECT_NE(text.find("0.07"), std::string::npos);  // 4 slots x 60 s = 0.0667 slot-hours
}

// Issue 47.5: an array element is ID[INDEX] in the table and the CSV, never its 64-bit id.
TEST(HistoryFormatTest, ArrayElementsAreShownAsIdAndIndex) {
  wire::HistoryEntry e{.id = ArrayElementId(12, 3), .user = "alice", .state = "DONE"};
  e.steps.push_back(wire::StepRecord{.step = 1, .host = "h1", .command = "x", .state = "COMPLETED"});
  const std::string table = FormatHistoryTable({e});
  EXPECT_NE(table.find("\n12[3] "), std::string::npos) << table;
  EXPECT_NE(table.find("\n12[3].1 "), std::string::npos) << table;
  EXPECT_EQ(table.find(std::to_string(ArrayElementId(12, 3))), std::string::npos) << table;
  const std::string csv = FormatHistoryCsv({e});
  EXPECT_NE(csv.find("\r\n12[3],"), std::string::npos) << csv;
}

// Issue 47.5: in the history's JSON an element is its array's id and its index, as in job
// objects; reading a row back gives the element's job id; a bad index is refused.
TEST(HistoryFormatTest, AnElementIsItsArrayIdAndIndexInJsonAndRoundTrips) {
  const wire::HistoryEntry e{.id = ArrayElementId(12, 3), .user = "alice", .state = "DONE"};
  const nlohmann::ordered_json row = wire::HistoryEntryJson(e);
  EXPECT_EQ(row["id"], 12);
  EXPECT_EQ(row["index"], 3);
  Result<wire::HistoryEntry> back = wire::ParseHistoryEntry(nlohmann::json(row));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->id, ArrayElementId(12, 3));
  EXPECT_FALSE(wire::HistoryEntryJson({.id = 12}).contains("index"));
  nlohmann::json bad = nlohmann::json(row);
  bad["index"] = -1;
  EXPECT_FALSE(wire::ParseHistoryEntry(bad));
}

// `history -l` (issue 47.6): one line per event in order, in words, then the runs' totals.
TEST(HistoryFormatTest, TheTimelineIsOneLinePerEventThenTheTotals) {
  const nlohmann::json reply = nlohmann::json::parse(R"({
    "id": 9,
    "runs": [{"name": "sim", "user": "alice", "queue": "normal", "wait_seconds": 3,
              "run_seconds": 10},
             {"name": "sim", "user": "alice", "queue": "normal", "wait_seconds": 4,
              "run_seconds": 5}],
    "timeline": [{"time": 100, "event": "submit"},
                 {"time": 101, "event": "modify", "by": "bob", "changes": "queue: a -> b"},
                 {"time": 103, "event": "start", "hosts": [["h1", 2], ["h2", 1]]},
                 {"time": 113, "event": "requeue", "why": "host h1 lost"},
                 {"time": 117, "event": "start", "hosts": [["h3", 3]]},
                 {"time": 122, "event": "end", "state": "EXIT", "exit_code": 3,
                  "cause": "NON_ZERO_EXIT"}]})");
  const std::string text = FormatJobTimeline(reply);
  const std::vector<std::string> expected = {
      "Job 9 <sim>, user alice, queue normal",
      "  " + LocalIsoTime(100) + "  submitted",
      "  " + LocalIsoTime(101) + "  modified by bob: queue: a -> b",
      "  " + LocalIsoTime(103) + "  started on h1:2, h2:1",
      "  " + LocalIsoTime(113) + "  requeued: host h1 lost",
      "  " + LocalIsoTime(117) + "  started on h3:3",
      "  " + LocalIsoTime(122) + "  ended EXIT (exit 3), NON_ZERO_EXIT",
      "  2 runs; waited 7 s, ran 15 s in all"};
  std::string want;
  for (const std::string& line : expected) want += line + "\n";
  EXPECT_EQ(text, want);
  EXPECT_EQ(FormatJobTimeline(nlohmann::json("garbage")), "");
}

TEST(HistoryFormatTest, TimesAreEpochRelativeOrDates) {
  EXPECT_EQ(*ParseHistoryTime("--since", "1700000000", 0), 1'700'000'000);
  EXPECT_EQ(*ParseHistoryTime("--since", "-1d", 100'000), 100'000 - 86'400);
  EXPECT_EQ(*ParseHistoryTime("--since", "-90s", 1000), 910);
  EXPECT_TRUE(ParseHistoryTime("--since", "2026-01-02", 0));
  for (const char* bad : {"", "-", "-1x", "+1d", "yesterday", "12:00"}) {
    EXPECT_FALSE(ParseHistoryTime("--since", bad, 1000)) << bad;
  }
}

}  // namespace
}  // namespace sluice::client
