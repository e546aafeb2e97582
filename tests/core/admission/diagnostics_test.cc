// Admission diagnostics and counters (R-ADM-3, R-SRV-4).
#include "core/admission/diagnostics.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::CycleAndCommit;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

TEST(DiagnosticsTest, EveryEnumHasADistinctName) {
  std::set<std::string> names;
  for (Classification c :
       {Classification::kNew, Classification::kAdmitted, Classification::kTemporarilyUnavailable,
        Classification::kUnschedulable}) {
    EXPECT_TRUE(names.insert(std::string(ToString(c))).second);
  }
  names.clear();  // each enum's names are distinct within the enum
  for (GateState g : {GateState::kNone, GateState::kCounting, GateState::kActive}) {
    EXPECT_TRUE(names.insert(std::string(ToString(g))).second);
  }
  names.clear();
  for (AdmissionPhase p : {AdmissionPhase::kPending, AdmissionPhase::kAdmitting,
                           AdmissionPhase::kAdmitted, AdmissionPhase::kEnded}) {
    EXPECT_TRUE(names.insert(std::string(ToString(p))).second);
  }
  EXPECT_EQ(names.count("UNKNOWN"), 0u);
  EXPECT_NE(ToString(Classification::kUnschedulable), "UNKNOWN");
  EXPECT_NE(ToString(GateState::kActive), "unknown");
}

// Ten one-slot hosts of type x, 7 busy; a bounded queue allowing 1 bypass.
ClusterState Scenario() {
  ClusterConfig config = ClusterBuilder().Hosts(10, 1).Config();
  for (HostSpec& host : config.hosts) host.attributes["type"] = "x";
  config.queues = {QueueSpec{.name = "normal",
                             .policy = PolicyKind::kBoundedBackfill,
                             .max_bypass = 1,
                             .max_head_wait = 3600}};
  return std::move(ClusterState::Create(config)).value();
}

TEST(DiagnosticsTest, ABlockedHeadShowsItsCountersAndGate) {
  ClusterState state = Scenario();
  SubmitRunning(state, JobBuilder(1).Tasks(7).Limit(100), 0);
  Submit(state, JobBuilder(2).Tasks(10).ResReq("select[type==x]").Submit(5));
  Submit(state, JobBuilder(3).Tasks(1).Submit(6));
  Submit(state, JobBuilder(4).Tasks(1).Submit(7));
  CycleAndCommit(state, 10);  // job 3 bypasses the head; the gate then closes (max_bypass 1)

  AdmissionDiagnostics head = Diagnose(*state.FindJob(2), state, 40);
  EXPECT_EQ(head.policy, PolicyKind::kBoundedBackfill);
  EXPECT_EQ(head.sequence, state.FindJob(2)->seq);
  EXPECT_EQ(head.pending_age, 35);
  EXPECT_EQ(head.request, "10 tasks: select[type==x]");
  EXPECT_EQ(head.classification, Classification::kTemporarilyUnavailable);
  EXPECT_EQ(head.bypass_count, 1);
  EXPECT_EQ(head.max_bypass, 1);
  EXPECT_EQ(head.first_blocked, 10);
  EXPECT_EQ(head.gate, GateState::kActive);
  EXPECT_EQ(head.gate_since, 10);
  EXPECT_EQ(head.requested_slots, 10);
  EXPECT_EQ(head.eligible_slots, 10);

  AdmissionDiagnostics later = Diagnose(*state.FindJob(4), state, 40);
  EXPECT_EQ(later.gate, GateState::kNone);
  EXPECT_EQ(Diagnose(*state.FindJob(3), state, 40).classification, Classification::kAdmitted);
}

TEST(DiagnosticsTest, CountersAddUpWhatCyclesDid) {
  ClusterState state = Scenario();
  SubmitRunning(state, JobBuilder(1).Tasks(7).Limit(100), 0);
  Submit(state, JobBuilder(2).Tasks(10).Submit(5));
  Submit(state, JobBuilder(3).Tasks(1).Submit(6));
  Submit(state, JobBuilder(4).Tasks(1).Submit(7));
  Submit(state, JobBuilder(5).Tasks(11).Submit(8));  // more than the cluster: unschedulable
  CycleAndCommit(state, 10);
  std::vector<QueueCounters> counters = Counters(state, 100);
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0].queue, "normal");
  EXPECT_EQ(counters[0].oldest_pending_age, 95);  // job 2, enqueued at 5
  EXPECT_EQ(counters[0].gated_heads, 1);
  EXPECT_EQ(counters[0].totals.admitted, 1);
  EXPECT_EQ(counters[0].totals.backfilled, 1);
  EXPECT_EQ(counters[0].totals.unschedulable, 1);
  EXPECT_GE(counters[0].totals.temporarily_unavailable, 1);  // the head, at least once
}

}  // namespace
}  // namespace sluice::core
