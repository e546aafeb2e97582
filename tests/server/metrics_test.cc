// PromWriter on prometheus-cpp: the text keeps the caller's family, sample and label order, and
// a histogram written as its exposition samples comes out with the same counts.
#include "server/metrics.h"

#include <gtest/gtest.h>

namespace sluice::server {
namespace {

TEST(PromWriterTest, GaugesAndCountersKeepTheWrittenOrder) {
  PromWriter w;
  w.Family("sluice_jobs", "gauge", "Jobs by state and queue.");
  w.Sample("sluice_jobs", {{"state", "RUNNING"}, {"queue", "normal"}}, 2);
  w.Sample("sluice_jobs", {{"state", "PENDING"}, {"queue", "normal"}}, 1);
  w.Family("sluice_submissions_total", "counter", "Jobs accepted.");
  w.Sample("sluice_submissions_total", {}, 7);
  EXPECT_EQ(w.text(),
            "# HELP sluice_jobs Jobs by state and queue.\n"
            "# TYPE sluice_jobs gauge\n"
            "sluice_jobs{state=\"RUNNING\",queue=\"normal\"} 2\n"
            "sluice_jobs{state=\"PENDING\",queue=\"normal\"} 1\n"
            "# HELP sluice_submissions_total Jobs accepted.\n"
            "# TYPE sluice_submissions_total counter\n"
            "sluice_submissions_total 7\n");
}

TEST(PromWriterTest, AFamilyWithoutSamplesShowsItsHeader) {
  PromWriter w;
  w.Family("sluice_pending_reasons", "gauge", "Waiting jobs.");
  EXPECT_EQ(w.text(),
            "# HELP sluice_pending_reasons Waiting jobs.\n"
            "# TYPE sluice_pending_reasons gauge\n");
}

TEST(PromWriterTest, EscapesLabelValues) {
  PromWriter w;
  w.Family("sluice_slots", "gauge", "Slots.");
  w.Sample("sluice_slots", {{"queue", "a\"b\\c\nd"}}, 1);
  EXPECT_NE(w.text().find("sluice_slots{queue=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos)
      << w.text();
}

TEST(PromWriterTest, HistogramFromItsSamples) {
  PromWriter w;
  w.Family("sluice_cycle_duration_seconds", "histogram", "Scheduling cycle duration.");
  w.Sample("sluice_cycle_duration_seconds_bucket", {{"le", "0.001"}}, 1);
  w.Sample("sluice_cycle_duration_seconds_bucket", {{"le", "0.01"}}, 3);
  w.Sample("sluice_cycle_duration_seconds_bucket", {{"le", "+Inf"}}, 4);
  w.Sample("sluice_cycle_duration_seconds_sum", {}, 0.5);
  w.Sample("sluice_cycle_duration_seconds_count", {}, 4);
  const std::string text = w.text();
  for (const char* line :
       {"# TYPE sluice_cycle_duration_seconds histogram\n",
        "sluice_cycle_duration_seconds_bucket{le=\"0.001\"} 1\n",
        "sluice_cycle_duration_seconds_bucket{le=\"0.01\"} 3\n",
        "sluice_cycle_duration_seconds_bucket{le=\"+Inf\"} 4\n",
        "sluice_cycle_duration_seconds_sum 0.5\n", "sluice_cycle_duration_seconds_count 4\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "in\n" << text;
  }
}

}  // namespace
}  // namespace sluice::server
