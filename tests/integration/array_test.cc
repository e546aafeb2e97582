// Loopback integration of job arrays (R-UX-3): a real server and agents run an array of 50
// submitted with `sluice submit --array 1-50%5`; sampling never sees more than 5 elements
// running; every element runs once, with its own index in an output file named with
// `%A_%a`; `sluice cancel ID[A-B]` cancels a range; a job with `done(ID)` starts only once
// every element ended; `sluice jobs -A` summarises the array.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "integration/cluster_harness.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::ReadFile;

constexpr char kCluster[] = R"(
hosts:
  - name: h[1-2]
    slots: 8
queues:
  - name: normal
    policy: fifo
)";

int64_t Count(const json& array, const char* state) {
  return array.is_object() && array["elements"].is_object() ? array["elements"].value(state, 0)
                                                            : -1;
}

TEST(ArrayIntegrationTest, FiftyElementsUnderACapOfFiveEachRunOnceWithTheirIndex) {
  Cluster c(DefaultClusterYaml(kCluster));
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  c.StartAgent("h1", 8);
  c.StartAgent("h2", 8);
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok" && c.HostState("h2") == "ok"; }))
      << c.Logs();
  const std::string out = (c.dir() / "el.%A_%a").string();
  testing::ProcessResult submit =
      c.Cli({"submit", "--parsable", "--array", "1-50%5", "-o", out, "--", "/bin/sh", "-c",
             "echo index=$SLUICE_ARRAY_INDEX id=$SLUICE_ARRAY_ID; sleep 0.2"});
  ASSERT_EQ(submit.exit_code, 0) << submit.stderr_text;
  const int64_t id = std::stoll(submit.stdout_text);
  testing::ProcessResult after =
      c.Cli({"submit", "--parsable", "-w", "done(" + std::to_string(id) + ")", "--", "true"});
  ASSERT_EQ(after.exit_code, 0) << after.stderr_text;
  const int64_t after_id = std::stoll(after.stdout_text);
  // Cancel a range while the first elements run: 41-45 never run.
  testing::ProcessResult cancel = c.Cli({"cancel", std::to_string(id) + "[41-45]"});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.stderr_text;
  int64_t most_running = 0;
  bool dependent_started_early = false;
  ASSERT_TRUE(Eventually(
      [&] {
        const json array = c.Job(id);
        most_running = std::max(most_running, Count(array, "RUNNING"));
        const std::string dep = c.JobState(after_id);
        if (dep != "PENDING" && array.value("state", "") != "DONE" &&
            array.value("state", "") != "CANCELLED") {
          dependent_started_early = true;
        }
        return Count(array, "DONE") + Count(array, "CANCELLED") == 50;
      },
      40s))
      << c.Job(id).dump() << c.Logs();
  EXPECT_LE(most_running, 5);
  EXPECT_GE(most_running, 1);
  EXPECT_FALSE(dependent_started_early);
  const json array = c.Job(id);
  EXPECT_EQ(Count(array, "CANCELLED"), 5) << array;
  EXPECT_EQ(Count(array, "DONE"), 45) << array;
  EXPECT_EQ(array["state"], "CANCELLED");  // as done(ID) reads it: not every element DONE
  for (int index = 1; index <= 50; ++index) {
    const std::filesystem::path file =
        c.dir() / ("el." + std::to_string(id) + "_" + std::to_string(index));
    if (index >= 41 && index <= 45) {
      EXPECT_FALSE(std::filesystem::exists(file)) << index;
      continue;
    }
    EXPECT_EQ(ReadFile(file).value_or("missing"),
              "index=" + std::to_string(index) + " id=" + std::to_string(id) + "\n");
  }
  // done(ID) is unsatisfiable once an element was cancelled: the dependent never starts.
  EXPECT_TRUE(Eventually([&] { return c.JobState(after_id) != "RUNNING"; }, 1s));
  EXPECT_NE(c.JobState(after_id), "DONE");
  const json element = c.Get("/v1/jobs/" + std::to_string(id) + "?index=7");
  EXPECT_EQ(element["index"], 7);
  EXPECT_EQ(element["state"], "DONE");
  testing::ProcessResult summary = c.Cli({"jobs", "-A"});
  EXPECT_EQ(summary.exit_code, 0);
  EXPECT_NE(summary.stdout_text.find("NJOBS"), std::string::npos) << summary.stdout_text;
  EXPECT_NE(summary.stdout_text.find(" 50 "), std::string::npos) << summary.stdout_text;
}

TEST(ArrayIntegrationTest, DoneOfAnArrayStartsTheDependentAfterItsLastElement) {
  Cluster c(DefaultClusterYaml(kCluster));
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  c.StartAgent("h1", 8);
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; })) << c.Logs();
  testing::ProcessResult submit = c.Cli({"submit", "--parsable", "-J", "sweep[1-6]%3", "--",
                                         "/bin/sh", "-c", "sleep 0.3; date +%s.%N"});
  ASSERT_EQ(submit.exit_code, 0) << submit.stderr_text;
  const int64_t id = std::stoll(submit.stdout_text);
  testing::ProcessResult after =
      c.Cli({"submit", "--parsable", "-w", "done(" + std::to_string(id) + ")", "--", "true"});
  const int64_t after_id = std::stoll(after.stdout_text);
  ASSERT_TRUE(c.WaitAllEnded({after_id}, 30s)) << c.Job(id).dump() << c.Logs();
  EXPECT_EQ(c.JobState(after_id), "DONE");
  const json array = c.Job(id);
  EXPECT_EQ(array["name"], "sweep");
  EXPECT_EQ(Count(array, "DONE"), 6);
  // The dependent started after every element ended.
  int64_t last_end = 0;
  for (int index = 1; index <= 6; ++index) {
    const json element =
        c.Get("/v1/jobs/" + std::to_string(id) + "?index=" + std::to_string(index));
    last_end = std::max<int64_t>(last_end, element.value("end_time", int64_t{0}));
  }
  EXPECT_GE(c.Job(after_id).value("start_time", int64_t{0}), last_end);
}

}  // namespace
}  // namespace sluice::integration
