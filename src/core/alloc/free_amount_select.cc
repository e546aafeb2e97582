#include "core/alloc/free_amount_select.h"

#include <cmath>

namespace sluice::core {

std::optional<FreeAmountSelect> FreeAmountSelect::Compile(resreq::ExprId select,
                                                          const resreq::ExprPool& pool,
                                                          const ClusterState& state) {
  if (select == resreq::kNoExpr) return std::nullopt;
  std::vector<resreq::ExprId> comparisons;
  if (pool.op(select) == resreq::ExprOp::kAnd) {
    for (const resreq::Operand& operand : pool.operands(select)) comparisons.push_back(operand.id);
  } else {
    comparisons.push_back(select);
  }
  FreeAmountSelect compiled;
  for (resreq::ExprId id : comparisons) {
    if (!resreq::IsComparison(pool.op(id))) return std::nullopt;
    const auto operands = pool.operands(id);
    const resreq::ExprId lhs = operands[0].id;
    const resreq::ExprId rhs = operands[1].id;
    Test test{.op = pool.op(id)};
    resreq::ExprId name = lhs;
    resreq::ExprId number = rhs;
    if (pool.op(lhs) == resreq::ExprOp::kNumber && pool.op(rhs) == resreq::ExprOp::kIdent) {
      name = rhs;
      number = lhs;
      test.number_first = true;
    } else if (pool.op(lhs) != resreq::ExprOp::kIdent || pool.op(rhs) != resreq::ExprOp::kNumber) {
      return std::nullopt;
    }
    // A literal that is not finite is undefined, and its comparison false: left to EvalSelect.
    test.number = pool.number(number);
    if (!std::isfinite(test.number)) return std::nullopt;
    // The name resolves to a free amount first (eval.h): always for `slots`, and for a host
    // resource on every host that defines it.
    if (pool.text(name) == "slots") {
      test.slots = true;
    } else if (std::optional<ResourceId> resource =
                   state.topology().FindHostResource(pool.text(name))) {
      test.resource = *resource;
    } else {
      return std::nullopt;
    }
    compiled.tests_.push_back(test);
  }
  return compiled;
}

}  // namespace sluice::core
