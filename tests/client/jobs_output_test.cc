// `sluice jobs` printed as the listing arrives (client/jobs_output.h, issue 45): for a listing
// of at most kSizingRows rows every layout prints exactly what the whole-listing formatters
// print; a longer one keeps its first rows' column widths; --json is the array's dump(2).
#include "client/jobs_output.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "client/array_format.h"
#include "client/format.h"
#include "client/job_long_format.h"
#include "client/printable.h"

namespace sluice::client {
namespace {

using nlohmann::json;

std::string Streamed(const json& jobs, JobsLayout layout, std::vector<std::string> fields = {}) {
  std::ostringstream out;
  std::unique_ptr<JobsOutput> output = NewJobsOutput(out, layout, 5000, std::move(fields));
  for (const json& job : jobs) output->Add(job);
  output->Finish();
  return out.str();
}

json SomeJobs() {
  return json::parse(R"([
    {"id": 7, "user": "alice", "state": "RUNNING", "queue": "normal", "tasks": 4,
     "hosts": [{"name": "h1", "slots": 2}, {"name": "h2", "slots": 2}], "exit_code": null,
     "name": "sim", "submit_time": 1000, "start_time": 1200},
    {"id": 12, "user": "bob", "state": "EXIT", "queue": "short", "tasks": 1, "hosts": [],
     "exit_code": 3, "name": "", "cause": "MEM_LIMIT", "message": "used 2 GB of 1 GB"},
    {"id": 13, "user": "carol-the-long", "state": "PENDING", "queue": "normal", "tasks": 2,
     "reason": "NO_RESOURCE", "name": "wait\u001b[2J",
     "reasons": {"main": "NO_RESOURCE", "details": [], "hint": "a host with 2 free slots"}},
    {"id": 9, "array": "1-3", "index": 2, "user": "dan", "state": "HELD", "queue": "normal",
     "name": "arr", "elements": {"PENDING": 2, "RUNNING": 1}}])");
}

TEST(JobsOutputTest, ASmallListingPrintsExactlyAsTheWholeTableDid) {
  const json jobs = SomeJobs();
  EXPECT_EQ(Streamed(jobs, JobsLayout::kTable), PrintableText(FormatJobs(jobs, 5000)));
  EXPECT_EQ(Streamed(jobs, JobsLayout::kPending), PrintableText(FormatPendingJobs(jobs, 5000)));
  const std::vector<std::string> fields = {"id", "state", "elapsed", "hosts", "name"};
  EXPECT_EQ(Streamed(jobs, JobsLayout::kFields, fields),
            PrintableText(FormatJobFields(jobs, fields, 5000)));
  EXPECT_EQ(Streamed(jobs, JobsLayout::kLong), PrintableText(FormatJobsLong(jobs)));
  EXPECT_EQ(Streamed(jobs, JobsLayout::kArrays), PrintableText(FormatArrays(jobs)));
  EXPECT_EQ(Streamed(jobs, JobsLayout::kJson), jobs.dump(2) + "\n");
  for (JobsLayout layout : {JobsLayout::kTable, JobsLayout::kPending, JobsLayout::kLong,
                            JobsLayout::kArrays, JobsLayout::kJson}) {
    EXPECT_EQ(Streamed(json::array(), layout),
              layout == JobsLayout::kTable     ? PrintableText(FormatJobs(json::array(), 0))
              : layout == JobsLayout::kPending ? FormatPendingJobs(json::array(), 0)
              : layout == JobsLayout::kLong    ? FormatJobsLong(json::array())
              : layout == JobsLayout::kArrays  ? FormatArrays(json::array())
                                               : json::array().dump(2) + "\n");
  }
}

TEST(JobsOutputTest, ALongListingKeepsTheFirstRowsWidths) {
  json jobs = json::array();
  const size_t n = JobsOutput::kSizingRows + 2;
  for (size_t i = 0; i < n; ++i) {
    jobs.push_back({{"id", i + 1}, {"user", "u"}, {"state", "PENDING"}, {"name", "n"}});
  }
  jobs.back()["name"] = "a-much-longer-name";
  jobs.back()["user"] = "a-much-longer-user";
  const std::string text = Streamed(jobs, JobsLayout::kFields, {"id", "user", "name"});
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> all;
  while (std::getline(lines, line)) all.push_back(line);
  ASSERT_EQ(all.size(), n + 1);
  EXPECT_EQ(all[0], "ID    USER  NAME");  // sized by the first kSizingRows rows (ids to 1000)
  EXPECT_EQ(all[n - 1], "1001  u     n");
  EXPECT_EQ(all[n], "1002  a-much-longer-user  a-much-longer-name") << "pushed right, 2 apart";
}

}  // namespace
}  // namespace sluice::client
