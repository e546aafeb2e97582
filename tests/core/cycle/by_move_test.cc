// Apply(Event&&) and Commit(CycleResult&&) (events.h, scheduler.h): they hand the spec and
// the allocations over instead of copying them, and leave exactly the state the copying forms
// leave. The drive loop commits by move: its handlers read a start's allocation in the job.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "core/driver/drive_loop.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;

// Longer than any short-string buffer: a copy and a move differ for it.
const std::string kLongUser = "a-user-name-longer-than-a-short-string-buffer";

std::vector<JobSpec> Specs() {
  std::vector<JobSpec> specs;
  for (JobId id = 1; id <= 6; ++id) {
    JobSpec spec = JobBuilder(id)
                       .Tasks(static_cast<int32_t>(id % 3) + 1)
                       .Limit(100 * id)
                       .User(kLongUser + std::to_string(id));
    spec.name = "job-name-" + std::to_string(id) + "-also-longer-than-a-short-string";
    if (id == 4) spec.depend = "done(1) && ended(2)";
    if (id == 5) spec.hold = true;
    specs.push_back(std::move(spec));
  }
  return specs;
}

// What the table holds of a job, as text: equal texts, equal jobs for these tests.
std::string Describe(const Job& job) {
  std::string text = std::to_string(job.spec.id) + " " + job.spec.name + " " + job.spec.user + " " +
                     job.spec.depend + " q" + std::to_string(job.queue) + " seq" +
                     std::to_string(job.seq) + " " + std::string(ToString(job.state)) + " min" +
                     std::to_string(job.min_slots) + " digest" +
                     std::to_string(job.admission.spec_digest) + " start" +
                     std::to_string(job.start_time) + "/" + std::to_string(job.start_seq);
  for (const HostGrant& g : job.allocation.hosts) {
    text += " h" + std::to_string(g.host) + ":" + std::to_string(g.slots);
  }
  return text;
}

std::vector<std::string> Table(const ClusterState& state) {
  std::vector<std::string> lines;
  for (JobId id = 1; id <= 6; ++id) {
    const Job* job = state.FindJob(id);
    lines.push_back(job == nullptr ? "none" : Describe(*job));
  }
  for (const RunningEntry& entry : state.running()) {
    lines.push_back("running " + std::to_string(entry.job->spec.id));
  }
  for (const RunningByEnd& entry : state.running_by_end()) {
    lines.push_back("by end " + std::to_string(entry.end) + "/" + std::to_string(entry.slots));
  }
  lines.push_back("free " + std::to_string(state.topology().free_slots()));
  return lines;
}

TEST(ByMoveTest, ApplyByMoveLeavesTheStateApplyByCopyLeaves) {
  ClusterState by_copy = ClusterBuilder().Hosts(2, 2).State();
  ClusterState by_move = ClusterBuilder().Hosts(2, 2).State();
  for (const JobSpec& spec : Specs()) {
    const Event event = JobSubmitted{spec};
    ASSERT_TRUE(Apply(event, spec.submit_time, by_copy).ok());
    Event moved = JobSubmitted{spec};
    ASSERT_TRUE(Apply(std::move(moved), spec.submit_time, by_move).ok());
    // The copying form left its event whole; the moving one took the spec's heap strings
    // (libstdc++ leaves a moved-from long string empty; the user is interned, not moved).
    EXPECT_EQ(std::get<JobSubmitted>(event).spec.name, spec.name);
    // NOLINTNEXTLINE(bugprone-use-after-move)
    EXPECT_TRUE(std::get<JobSubmitted>(moved).spec.name.empty());
  }
  EXPECT_EQ(Table(by_move), Table(by_copy));
  EXPECT_EQ(by_move.unclassified(), by_copy.unclassified());
}

TEST(ByMoveTest, ARestoredSpecMovesToo) {
  ClusterState by_copy = ClusterBuilder().Hosts(1, 2).State();
  ClusterState by_move = ClusterBuilder().Hosts(1, 2).State();
  const JobSpec spec = Specs().front();
  const Event event = JobRestored{spec, 7, AdmissionRecord{}};
  ASSERT_TRUE(Apply(event, 0, by_copy).ok());
  ASSERT_TRUE(Apply(Event{JobRestored{spec, 7, AdmissionRecord{}}}, 0, by_move).ok());
  EXPECT_EQ(Table(by_move), Table(by_copy));
}

TEST(ByMoveTest, ARefusedSubmissionByMoveChangesNothing) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(1).Build()}, 0, state).ok());
  EXPECT_EQ(Apply(JobSubmitted{JobBuilder(1).Build()}, 0, state).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(Apply(JobSubmitted{JobBuilder(2).Depend("done(9)").Build()}, 0, state).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(state.job_count(), 1);
}

TEST(ByMoveTest, CommitByMoveLeavesTheStateCommitByCopyLeaves) {
  ClusterState by_copy = ClusterBuilder().Hosts(2, 2).Policy(PolicyKind::kEasyBackfill).State();
  for (const JobSpec& spec : Specs()) testing::Submit(by_copy, spec);
  ClusterState by_move = by_copy.Clone();
  const Scheduler scheduler;
  const CycleResult result = scheduler.RunCycle(by_copy, 0);
  CycleResult moved = scheduler.RunCycle(by_move, 0);
  ASSERT_FALSE(testing::Started(result).empty());
  Commit(result, 0, by_copy);
  Commit(std::move(moved), 0, by_move);
  EXPECT_EQ(Table(by_move), Table(by_copy));
  // Each start's allocation is now its job's only; every other decision is as it was.
  // NOLINTNEXTLINE(bugprone-use-after-move)
  ASSERT_EQ(moved.decisions.size(), result.decisions.size());
  for (size_t i = 0; i < result.decisions.size(); ++i) {
    const auto* start = std::get_if<StartJob>(&result.decisions[i]);
    if (start == nullptr) continue;
    const StartJob& moved_start = std::get<StartJob>(moved.decisions[i]);
    EXPECT_EQ(moved_start.job, start->job);
    EXPECT_TRUE(moved_start.allocation.hosts.empty());
    EXPECT_EQ(by_move.FindJob(start->job)->allocation, start->allocation);
  }
}

// A handler sees the allocation in the started job, as DecisionHandler says.
class StartSlots final : public DecisionHandler {
 public:
  explicit StartSlots(const ClusterState& state) : state_(state) {}
  void OnStart(const StartJob& start, Instant /*now*/) override {
    slots.push_back(state_.FindJob(start.job)->allocation.TotalSlots());
    decision_slots.push_back(start.allocation.TotalSlots());
  }
  std::vector<int64_t> slots;
  std::vector<int64_t> decision_slots;

 private:
  const ClusterState& state_;
};

TEST(ByMoveTest, TheDriveLoopsHandlersReadTheAllocationInTheJob) {
  ClusterState state = ClusterBuilder().Hosts(2, 2).State();
  testing::Submit(state, JobBuilder(1).Tasks(3).Build());
  testing::Submit(state, JobBuilder(2).Tasks(1).Build());
  const Scheduler scheduler;
  DriveLoop loop(scheduler, state);
  StartSlots handler(state);
  loop.Cycle(0, CycleOptions{}, handler);
  EXPECT_EQ(handler.slots, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(handler.decision_slots, (std::vector<int64_t>{0, 0}));
}

}  // namespace
}  // namespace sluice::core
