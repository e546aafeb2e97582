// FreeAmountSelect: a select[] that compares free amounts with constants (`mem>4000`,
// `slots>=2 && mem>8000`), compiled against the Capacity's free columns.
//
// Purpose (issue 45): such a select's verdict cannot be memoized per host (it changes with
// every claim), so a host scan evaluated it through the general evaluator on every host it
// visited: a virtual name lookup and a tree walk per host. Compiled, a host costs one array
// read and one comparison per test.
// Representation: the tests of a flat conjunction, in the expression's order.
// Invariant: Passes() returns exactly resreq::EvalSelect's verdict on a CapacityHostView of
// the same host, or nullopt when it cannot tell (the host does not define a resource a test
// reaches, so the name resolves to an attribute or a word): the caller evaluates then.
// Thread-safety: immutable after Compile.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/ids.h"
#include "core/alloc/capacity.h"
#include "core/model/cluster_state.h"
#include "core/resreq/expr.h"

namespace sluice::core {

class FreeAmountSelect {
 public:
  // The compiled form of `select` when it is `name op number` or `number op name`, or a
  // conjunction (`&&`) of them, where every name is `slots` or a host resource of `state`'s
  // topology and every number is a literal; nullopt otherwise (and for kNoExpr).
  static std::optional<FreeAmountSelect> Compile(resreq::ExprId select,
                                                 const resreq::ExprPool& pool,
                                                 const ClusterState& state);

  // EvalSelect's verdict on `host` with the free amounts of `capacity` (built from `state`),
  // tests in order with `&&`'s short circuit; nullopt when a test reached names a resource
  // the host does not define.
  std::optional<bool> Passes(const ClusterState& state, const Capacity& capacity,
                             HostIndex host) const {
    for (const Test& test : tests_) {
      double free = 0;
      if (test.slots) {
        free = capacity.FreeSlots(host);
      } else {
        if (!capacity.Defines(state, host, test.resource)) return std::nullopt;
        free = static_cast<double>(capacity.FreeResource(host, test.resource));
      }
      if (!Holds(test, free)) return false;
    }
    return true;
  }

 private:
  struct Test {
    bool slots = false;      // the free slots; else `resource`
    ResourceId resource = 0;
    resreq::ExprOp op = resreq::ExprOp::kEq;
    double number = 0;
    bool number_first = false;  // `4000 < mem`
  };
  static bool Holds(const Test& test, double free) {
    const double a = test.number_first ? test.number : free;
    const double b = test.number_first ? free : test.number;
    switch (test.op) {
      case resreq::ExprOp::kEq:
        return a == b;
      case resreq::ExprOp::kNe:
        return a != b;
      case resreq::ExprOp::kLt:
        return a < b;
      case resreq::ExprOp::kLe:
        return a <= b;
      case resreq::ExprOp::kGt:
        return a > b;
      default:
        return a >= b;  // kGe
    }
  }

  std::vector<Test> tests_;
};

}  // namespace sluice::core
