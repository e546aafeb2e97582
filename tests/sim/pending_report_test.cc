// The `--pending-at` report and the JSON shape the server returns (docs/reasons-json.md).
#include "sim/pending_report.h"

#include <gtest/gtest.h>

#include <set>

#include "testing/builders.h"
#include "wire/reasons_json.h"

namespace sluice::sim {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

core::PendJob Pend(JobId id, std::vector<core::ReasonDetail> details) {
  core::PendJob pend{.job = id, .reasons = {}};
  for (core::ReasonDetail& d : details) pend.reasons.Add(std::move(d));
  return pend;
}

TEST(ReasonDetailJsonTest, EveryCodeHasItsNameAndOnlyItsFields) {
  for (core::ReasonCode code : core::kAllReasonCodes) {
    nlohmann::ordered_json j = wire::ReasonDetailToJson(core::ReasonDetail{.code = code});
    EXPECT_EQ(j["code"], std::string(core::ToString(code)));
    for (const auto& [key, value] : j.items()) {
      static const std::set<std::string> known = {
          "code",      "resource", "needed",  "available", "hosts",     "one_host", "same",
          "per_host",  "job",      "time",    "limit",     "used",      "max",      "scope",
          "condition", "never",    "victims", "until",     "host_names"};
      EXPECT_TRUE(known.contains(key)) << key << " in " << j.dump();
    }
  }
  EXPECT_EQ(
      wire::ReasonDetailToJson({.code = core::ReasonCode::kLimit,
                                .limit = "u_slots",
                                .scope = "user alice",
                                .used = 8,
                                .max = 8})
          .dump(),
      R"({"code":"LIMIT","limit":"u_slots","scope":"user alice","resource":"slots","used":8,"max":8})");
  EXPECT_EQ(wire::ReasonDetailToJson({.code = core::ReasonCode::kPreempting, .hosts = 2, .used = 3})
                .dump(),
            R"({"code":"PREEMPTING","hosts":2,"victims":3})");
  EXPECT_EQ(wire::ReasonDetailToJson({.code = core::ReasonCode::kFairshare, .job = 4}).dump(),
            R"({"code":"FAIRSHARE","job":4})");
  EXPECT_EQ(
      wire::ReasonDetailToJson({.code = core::ReasonCode::kReserved, .job = 3, .time = kInfinite})
          .dump(),
      R"({"code":"RESERVED","job":3,"time":null})");
}

TEST(ReasonDetailJsonTest, ReservationReasonsCarryTheWindowAndHostsBothWays) {
  const core::ReasonDetail reserved{.code = core::ReasonCode::kHostReserved,
                                    .hosts = 1,
                                    .time = 1000,
                                    .scope = "reservation course",
                                    .until = 2000,
                                    .host_names = "h[1-8]"};
  const nlohmann::ordered_json j = wire::ReasonDetailToJson(reserved);
  EXPECT_EQ(j.dump(),
            R"({"code":"HOST_RESERVED","hosts":1,"scope":"reservation course","time":1000,)"
            R"("until":2000,"host_names":"h[1-8]"})");
  EXPECT_EQ(wire::ReasonDetailFromJson(nlohmann::json::parse(j.dump())), reserved);
  const core::ReasonDetail denied{.code = core::ReasonCode::kReservationDenied,
                                  .scope = "reservation course"};
  const std::string denied_json = wire::ReasonDetailToJson(denied).dump();
  EXPECT_EQ(denied_json, R"({"code":"RESERVATION_DENIED","scope":"reservation course"})");
  EXPECT_EQ(wire::ReasonDetailFromJson(nlohmann::json::parse(denied_json)), denied);
}

class PendingReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_.emplace(ClusterBuilder().Hosts(2, 2).State());
    SubmitRunning(*state_, JobBuilder(1).Tasks(3).Limit(100), 0);
    Submit(*state_, JobBuilder(2).Tasks(4).User("alice").Limit(50).Submit(5));
    Submit(*state_, JobBuilder(3).Tasks(1).User("bob").Submit(6));
    pending_ = {Pend(2, {{.code = core::ReasonCode::kNoResource,
                          .resource = "slots",
                          .needed = 4,
                          .available = 1,
                          .hosts = 2}}),
                Pend(3, {{.code = core::ReasonCode::kPriorityWait, .job = 2}})};
    estimates_[2] = core::StartEstimate{
        .start = 100, .unknown_because = {}, .reason_at_end = {}, .waits_for = {}};
    estimates_[3] = core::StartEstimate{.start = std::nullopt,
                                        .unknown_because = "it waits for jobs without a run limit",
                                        .reason_at_end = core::ReasonCode::kNoResource,
                                        .waits_for = {9}};
  }
  std::optional<core::ClusterState> state_;
  std::vector<core::PendJob> pending_;
  std::map<JobId, core::StartEstimate> estimates_;
};

TEST_F(PendingReportTest, JsonLinesCarryReasonsHintAndEstimate) {
  const PendingReportOptions options{.per_host = false, .estimates = &estimates_};
  EXPECT_EQ(
      PendingReportJsonLines(pending_, *state_, options),
      R"({"job":2,"reason":"NO_RESOURCE","details":[{"code":"NO_RESOURCE","resource":"slots","needed":4,"available":1,"hosts":2}],"hint":"needs 3 more slots — starts when running jobs free them","estimated_start":100})"
      "\n"
      R"({"job":3,"reason":"PRIORITY_WAIT","details":[{"code":"PRIORITY_WAIT","job":2}],"hint":"waits for job 2 (queue head) to start first","estimated_start":null,"unknown_because":"it waits for jobs without a run limit","reason_at_end":"NO_RESOURCE","waits_for":[9]})"
      "\n");
}

TEST_F(PendingReportTest, PerHostJson) {
  nlohmann::ordered_json j =
      wire::PendingJobToJson(pending_[0], *state_, nullptr, /*per_host=*/true);
  EXPECT_FALSE(j.contains("estimated_start"));
  EXPECT_EQ(j["hosts"].dump(),
            R"([{"host":"h1","code":"NO_RESOURCE","resource":"slots"},{"host":"h2","room":1}])");
}

TEST_F(PendingReportTest, TextShowsEstimates) {
  const PendingReportOptions options{.per_host = false, .estimates = &estimates_};
  const std::string text = PendingReportText(pending_, *state_, 6, options);
  EXPECT_NE(text.find(" Estimated start: t=100\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" Estimated start: unknown (it waits for jobs without a run limit: 9)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.rfind("2 pending jobs after the cycle at t=6\n", 0), 0u);
}

TEST_F(PendingReportTest, SummaryJson) {
  EXPECT_EQ(
      PendingSummaryJson(pending_, *state_),
      R"({"jobs":2,"by_reason":{"PRIORITY_WAIT":1,"NO_RESOURCE":1},"with_reason":{"PRIORITY_WAIT":1,"NO_RESOURCE":1},"queues":{"normal":{"jobs":2,"by_reason":{"PRIORITY_WAIT":1,"NO_RESOURCE":1},"with_reason":{"PRIORITY_WAIT":1,"NO_RESOURCE":1}}}})"
      "\n");
}

}  // namespace
}  // namespace sluice::sim
