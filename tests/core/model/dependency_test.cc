// Dependency expressions (R-Q-3): parsing, canonical text, three-valued evaluation and the
// deciding condition.
#include "core/model/dependency.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sluice::core {
namespace {

Dependency Parsed(std::string_view text) {
  Result<Dependency> dep = Dependency::Parse(text);
  EXPECT_TRUE(dep.has_value()) << text << ": " << dep.error().message();
  return dep.has_value() ? std::move(dep).value() : Dependency();
}

// A fake cluster: job id -> target; absent ids do not exist.
struct Jobs {
  std::map<JobId, DependTarget> targets;
  Jobs& Set(JobId id, JobState state, bool started = false) {
    targets[id] = DependTarget{.state = state, .started = started};
    return *this;
  }
  DependLookup Lookup() const {
    return [this](JobId id) -> std::optional<DependTarget> {
      auto it = targets.find(id);
      if (it == targets.end()) return std::nullopt;
      return it->second;
    };
  }
};

TEST(DependencyTest, ParsesTheGrammarIntoCanonicalText) {
  struct Case {
    std::string_view text;
    std::string_view canonical;
  };
  const Case cases[] = {
      {"done(12)", "done(12)"},
      {"  done( 12 )  ", "done(12)"},
      {"12", "done(12)"},
      {"done(12) && (ended(13) || !exit(14))", "done(12) && (ended(13) || !exit(14))"},
      {"done(1)&&done(2)||done(3)", "done(1) && done(2) || done(3)"},
      {"done(1) && (done(2) || done(3))", "done(1) && (done(2) || done(3))"},
      {"!(done(1) && done(2))", "!(done(1) && done(2))"},
      {"!!started(4)", "!!started(4)"},
      {"((ended(5)))", "ended(5)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(Parsed(c.text).ToString(), c.canonical);
  }
}

TEST(DependencyTest, ListsTheDistinctJobsItNames) {
  EXPECT_EQ(Parsed("done(9) && exit(3) || started(9)").jobs(), (std::vector<JobId>{3, 9}));
}

TEST(DependencyTest, RejectsBadTextWithTheColumn) {
  struct Case {
    std::string_view text;
    std::string_view message;
  };
  const Case cases[] = {
      {"", "column 1: expected a condition such as done(12)"},
      {"done(12", "column 8: expected ')'"},
      {"done 12)", "column 6: expected '(' after done, got '1'"},
      {"finished(3)", "column 1: expected done, exit, ended or started, not 'finished', got 'f'"},
      {"done(0)", "column 6: expected a job id (a positive integer), got '0'"},
      {"done(-3)", "column 6: expected a job id (a positive integer), got '-'"},
      {"done(99999999999999999999)", "column 6: job id out of range, got '9'"},
      {"done(1) &&",
       "column 11: expected done(id), exit(id), ended(id), started(id), a job id, '!' or '('"},
      {"done(1) & done(2)", "column 9: expected &&, || or the end, got '&'"},
      {"(done(1)", "column 9: expected ')'"},
      {"DONE(1)",
       "column 1: expected done(id), exit(id), ended(id), started(id), a job id, '!' or '(', got "
       "'D'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Result<Dependency> dep = Dependency::Parse(c.text);
    ASSERT_FALSE(dep.has_value());
    EXPECT_EQ(dep.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(dep.error().message(), c.message);
  }
}

TEST(DependencyTest, BoundsNestingAndLength) {
  EXPECT_FALSE(Dependency::Parse(std::string(100, '!') + "done(1)").has_value());
  EXPECT_FALSE(
      Dependency::Parse(std::string(100, '(') + "done(1)" + std::string(100, ')')).has_value());
  EXPECT_TRUE(
      Dependency::Parse(std::string(60, '(') + "done(1)" + std::string(60, ')')).has_value());
  std::string chain = "done(1)";
  while (chain.size() < kMaxDependencyText) chain += " && done(1)";
  EXPECT_FALSE(Dependency::Parse(chain).has_value());
}

TEST(DependencyTest, AtomsFollowTheReferencedJobsState) {
  struct Case {
    DependOp op;
    JobState state;
    bool started;
    DependVerdict want;
  };
  using S = JobState;
  using V = DependVerdict;
  const Case cases[] = {
      {DependOp::kDone, S::kPending, false, V::kWaiting},
      {DependOp::kDone, S::kRunning, true, V::kWaiting},
      {DependOp::kDone, S::kDone, true, V::kSatisfied},
      {DependOp::kDone, S::kExit, true, V::kNever},
      {DependOp::kDone, S::kCancelled, false, V::kNever},
      {DependOp::kExit, S::kHeld, false, V::kWaiting},
      {DependOp::kExit, S::kExit, false, V::kSatisfied},
      {DependOp::kExit, S::kCancelled, true, V::kSatisfied},
      {DependOp::kExit, S::kDone, true, V::kNever},
      {DependOp::kEnded, S::kRunning, true, V::kWaiting},
      {DependOp::kEnded, S::kDone, true, V::kSatisfied},
      {DependOp::kEnded, S::kCancelled, false, V::kSatisfied},
      {DependOp::kStarted, S::kPending, false, V::kWaiting},
      {DependOp::kStarted, S::kAdmitting, false, V::kSatisfied},
      {DependOp::kStarted, S::kRunning, true, V::kSatisfied},
      {DependOp::kStarted, S::kDone, true, V::kSatisfied},
      {DependOp::kStarted, S::kCancelled, false, V::kNever},
      {DependOp::kStarted, S::kExit, false, V::kNever},  // ended UNSCHEDULABLE
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(ToString(c.op)) + " " + std::string(ToString(c.state)));
    EXPECT_EQ(EvaluateAtom(c.op, DependTarget{.state = c.state, .started = c.started}), c.want);
  }
  EXPECT_EQ(EvaluateAtom(DependOp::kEnded, std::nullopt), DependVerdict::kNever);
}

TEST(DependencyTest, CombinesAsThreeValuedLogicAndNamesTheDecidingCondition) {
  struct Case {
    std::string_view text;
    DependVerdict verdict;
    std::string_view condition;
  };
  // 1 running, 2 done, 3 exited, 4 pending.
  Jobs jobs;
  jobs.Set(1, JobState::kRunning, true).Set(2, JobState::kDone, true).Set(3, JobState::kExit, true);
  jobs.Set(4, JobState::kPending);
  const Case cases[] = {
      {"done(2)", DependVerdict::kSatisfied, ""},
      {"done(1)", DependVerdict::kWaiting, "done(1)"},
      {"done(3)", DependVerdict::kNever, "done(3)"},
      {"done(2) && done(1)", DependVerdict::kWaiting, "done(1)"},
      {"done(1) && done(3)", DependVerdict::kNever, "done(3)"},
      {"done(3) || done(1)", DependVerdict::kWaiting, "done(3) || done(1)"},
      {"done(3) || done(2)", DependVerdict::kSatisfied, ""},
      {"done(3) || !ended(2)", DependVerdict::kNever, "done(3) || !ended(2)"},
      {"!exit(3)", DependVerdict::kNever, "!exit(3)"},
      {"!exit(2)", DependVerdict::kSatisfied, ""},
      {"done(2) && (ended(1) || !exit(4))", DependVerdict::kWaiting, "ended(1) || !exit(4)"},
      {"started(1) && exit(3) && ended(2)", DependVerdict::kSatisfied, ""},
      {"done(7)", DependVerdict::kNever, "done(7)"},  // no such job (purged)
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    DependEvaluation e = Parsed(c.text).Evaluate(jobs.Lookup());
    EXPECT_EQ(e.verdict, c.verdict);
    EXPECT_EQ(e.condition, c.condition);
  }
}

TEST(DependencyTest, EnumStringTablesAreComplete) {
  for (DependOp op : {DependOp::kDone, DependOp::kExit, DependOp::kEnded, DependOp::kStarted,
                      DependOp::kNot, DependOp::kAnd, DependOp::kOr}) {
    EXPECT_NE(ToString(op), "?");
  }
  for (DependVerdict v :
       {DependVerdict::kSatisfied, DependVerdict::kWaiting, DependVerdict::kNever}) {
    EXPECT_NE(ToString(v), "?");
  }
}

}  // namespace
}  // namespace sluice::core
