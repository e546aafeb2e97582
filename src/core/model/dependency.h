// Dependency: a job's dependency expression (SPEC §2, R-Q-3), compiled once at submission.
//
// Syntax (LSF `bsub -w` subset):
//   expr    := or
//   or      := and ( "||" and )*
//   and     := unary ( "&&" unary )*
//   unary   := "!" unary | "(" expr ")" | atom
//   atom    := ( "done" | "exit" | "ended" | "started" ) "(" id ")" | id
// A bare id means done(id), as in LSF. Names are lowercase; blanks are ignored; ids are
// positive integers. Bounded input: at most kMaxDependencyText characters and
// kMaxDependencyDepth levels of nesting, so hostile text cannot exhaust the stack (fuzzed).
//
// Evaluation is three-valued, on the referenced jobs' states:
//   done(j)    satisfied when j is DONE; never when j ended otherwise (EXIT, CANCELLED)
//   exit(j)    satisfied when j ended EXIT or CANCELLED (LSF counts a killed job as EXIT);
//              never when j is DONE
//   ended(j)   satisfied when j is DONE, EXIT or CANCELLED
//   started(j) satisfied when j is ADMITTING or RUNNING, or ended after it started; never
//              when j ended without ever starting
// A job that does not exist (purged) makes every atom on it `never`. `!` swaps satisfied and
// never; `&&`/`||` combine as Kleene's logic with `never` as false and `waiting` as unknown.
// `never` is final: the job waits forever and its reason says so (Slurm's
// DependencyNeverSatisfied). The condition reported is the smallest part of the expression
// that decides the verdict: for `a && b` the first operand with the same verdict, else the
// whole (sub)expression, printed canonically.
//
// Representation: nodes in a vector, children before parents, the root last; immutable after
// Parse. Thread-safety: a value type; const methods are safe to share.
// Implements R-Q-3 (dependencies).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/status.h"
#include "core/model/job.h"

namespace sluice::core {

inline constexpr size_t kMaxDependencyText = 4096;
inline constexpr int kMaxDependencyDepth = 64;

enum class DependOp : uint8_t { kDone, kExit, kEnded, kStarted, kNot, kAnd, kOr };
std::string_view ToString(DependOp op);

enum class DependVerdict : uint8_t { kSatisfied, kWaiting, kNever };
std::string_view ToString(DependVerdict verdict);

// What evaluation needs to know of a referenced job.
struct DependTarget {
  JobState state = JobState::kPending;
  bool started = false;  // it has held an allocation at some time
};

// Returns the target's state, or nullopt when no such job exists.
using DependLookup = std::function<std::optional<DependTarget>(JobId)>;

struct DependEvaluation {
  DependVerdict verdict = DependVerdict::kWaiting;
  std::string condition;  // the deciding part; empty when satisfied
};

class Dependency {
 public:
  struct Node {
    DependOp op = DependOp::kDone;
    JobId job = kNoJob;  // atoms
    int32_t left = -1;   // kNot, kAnd, kOr: operand node indices
    int32_t right = -1;  // kAnd, kOr
  };

  // Parses `text`. Errors: kInvalidArgument "column C: expected ..." (1-based column).
  static Result<Dependency> Parse(std::string_view text);

  // The distinct job ids the expression names, ascending.
  const std::vector<JobId>& jobs() const { return jobs_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  // Canonical text: `done(12) && (ended(13) || !exit(14))`.
  std::string ToString() const { return Text(Root()); }

  DependEvaluation Evaluate(const DependLookup& lookup) const;

 private:
  int32_t Root() const { return static_cast<int32_t>(nodes_.size()) - 1; }
  std::string Text(int32_t node) const;
  DependVerdict Verdict(int32_t node, const DependLookup& lookup) const;
  std::string Explain(int32_t node, DependVerdict verdict, const DependLookup& lookup) const;

  std::vector<Node> nodes_;
  std::vector<JobId> jobs_;
  friend class DependencyParser;
};

// The verdict of one atom on a target (nullopt: no such job).
DependVerdict EvaluateAtom(DependOp op, const std::optional<DependTarget>& target);

}  // namespace sluice::core
