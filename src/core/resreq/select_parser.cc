// select[] expressions, by precedence from loosest to tightest binding:
//   or         := and ("||" and)*
//   and        := not ("&&" not)*
//   not        := "!" not | comparison
//   comparison := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
//   sum        := product (("+" | "-") product)*
//   product    := unary (("*" | "/") unary)*
//   unary      := "-" unary | atom
//   atom       := NUMBER | STRING | NAME | "defined" "(" NAME ")" | "(" or ")"
// Operands of `|| && !` are conditions (a bare name there is a tag test); operands of
// comparisons and arithmetic are values. Each `(`, `!` and unary `-` is one nesting level.
#include <utility>
#include <vector>

#include "core/resreq/parser_internal.h"

namespace sluice::core::resreq::internal {
namespace {

std::optional<ExprOp> ComparisonOp(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEq:
      return ExprOp::kEq;
    case TokenKind::kNe:
      return ExprOp::kNe;
    case TokenKind::kLt:
      return ExprOp::kLt;
    case TokenKind::kLe:
      return ExprOp::kLe;
    case TokenKind::kGt:
      return ExprOp::kGt;
    case TokenKind::kGe:
      return ExprOp::kGe;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<ExprId> Parser::ParseCondition() {
  depth_ = 0;
  std::optional<Typed> typed = ParseOr();
  if (!typed.has_value()) return std::nullopt;
  return AsCondition(*typed);
}

std::optional<Parser::Typed> Parser::ParseOr() {
  std::optional<Typed> first = ParseAnd();
  if (!first.has_value() || Peek().kind != TokenKind::kOrOr) return first;
  std::vector<Operand> operands;
  std::optional<ExprId> id = AsCondition(*first);
  if (!id.has_value()) return std::nullopt;
  operands.push_back(Operand{.id = *id});
  while (Accept(TokenKind::kOrOr)) {
    std::optional<Typed> next = ParseAnd();
    if (!next.has_value()) return std::nullopt;
    id = AsCondition(*next);
    if (!id.has_value()) return std::nullopt;
    operands.push_back(Operand{.id = *id});
  }
  return Typed{
      .id = pool_.Chain(ExprOp::kOr, operands), .condition = true, .column = first->column};
}

std::optional<Parser::Typed> Parser::ParseAnd() {
  std::optional<Typed> first = ParseNot();
  if (!first.has_value() || Peek().kind != TokenKind::kAndAnd) return first;
  std::vector<Operand> operands;
  std::optional<ExprId> id = AsCondition(*first);
  if (!id.has_value()) return std::nullopt;
  operands.push_back(Operand{.id = *id});
  while (Accept(TokenKind::kAndAnd)) {
    std::optional<Typed> next = ParseNot();
    if (!next.has_value()) return std::nullopt;
    id = AsCondition(*next);
    if (!id.has_value()) return std::nullopt;
    operands.push_back(Operand{.id = *id});
  }
  return Typed{
      .id = pool_.Chain(ExprOp::kAnd, operands), .condition = true, .column = first->column};
}

std::optional<Parser::Typed> Parser::ParseNot() {
  const Token& bang = Peek();
  if (bang.kind != TokenKind::kBang) return ParseComparison();
  if (!Nest(bang)) return std::nullopt;
  Next();
  std::optional<Typed> operand = ParseNot();
  if (!operand.has_value()) return std::nullopt;
  std::optional<ExprId> id = AsCondition(*operand);
  if (!id.has_value()) return std::nullopt;
  --depth_;
  return Typed{.id = pool_.Unary(ExprOp::kNot, *id), .condition = true, .column = bang.column};
}

std::optional<Parser::Typed> Parser::ParseComparison() {
  std::optional<Typed> lhs = ParseSum();
  if (!lhs.has_value()) return std::nullopt;
  if (Peek().kind == TokenKind::kAssign) {
    Fail(Peek(), "'==' to compare (or another operator, or ']')");
    return std::nullopt;
  }
  std::optional<ExprOp> op = ComparisonOp(Peek().kind);
  if (!op.has_value()) return lhs;
  if (!RequireValue(*lhs)) return std::nullopt;
  Next();
  std::optional<Typed> rhs = ParseSum();
  if (!rhs.has_value() || !RequireValue(*rhs)) return std::nullopt;
  if (ComparisonOp(Peek().kind).has_value()) {
    Fail(Peek(), "'&&', '||' or ']' (comparisons do not chain: write a<b && b<c)");
    return std::nullopt;
  }
  return Typed{
      .id = pool_.Compare(*op, lhs->id, rhs->id), .condition = true, .column = lhs->column};
}

std::optional<Parser::Typed> Parser::ParseSum() {
  std::optional<Typed> first = ParseProduct();
  if (!first.has_value()) return std::nullopt;
  const auto is_sum_op = [this] {
    return Peek().kind == TokenKind::kPlus || Peek().kind == TokenKind::kMinus;
  };
  if (!is_sum_op()) return first;
  if (!RequireValue(*first)) return std::nullopt;
  std::vector<Operand> operands = {Operand{.id = first->id}};
  while (is_sum_op()) {
    const bool subtract = Next().kind == TokenKind::kMinus;
    std::optional<Typed> next = ParseProduct();
    if (!next.has_value() || !RequireValue(*next)) return std::nullopt;
    operands.push_back(Operand{.id = next->id, .inverse = subtract});
  }
  return Typed{.id = pool_.Chain(ExprOp::kSum, operands), .column = first->column};
}

std::optional<Parser::Typed> Parser::ParseProduct() {
  std::optional<Typed> first = ParseUnary();
  if (!first.has_value()) return std::nullopt;
  const auto is_product_op = [this] {
    return Peek().kind == TokenKind::kStar || Peek().kind == TokenKind::kSlash;
  };
  if (!is_product_op()) return first;
  if (!RequireValue(*first)) return std::nullopt;
  std::vector<Operand> operands = {Operand{.id = first->id}};
  while (is_product_op()) {
    const bool divide = Next().kind == TokenKind::kSlash;
    std::optional<Typed> next = ParseUnary();
    if (!next.has_value() || !RequireValue(*next)) return std::nullopt;
    operands.push_back(Operand{.id = next->id, .inverse = divide});
  }
  return Typed{.id = pool_.Chain(ExprOp::kProduct, operands), .column = first->column};
}

std::optional<Parser::Typed> Parser::ParseUnary() {
  const Token& minus = Peek();
  if (minus.kind != TokenKind::kMinus) return ParseAtom();
  if (!Nest(minus)) return std::nullopt;
  Next();
  std::optional<Typed> operand = ParseUnary();
  if (!operand.has_value() || !RequireValue(*operand)) return std::nullopt;
  --depth_;
  return Typed{.id = pool_.Unary(ExprOp::kNeg, operand->id), .column = minus.column};
}

std::optional<Parser::Typed> Parser::ParseAtom() {
  const Token& token = Peek();
  switch (token.kind) {
    case TokenKind::kNumber:
      Next();
      return Typed{.id = pool_.Number(token.number), .column = token.column};
    case TokenKind::kString:
      Next();
      return Typed{.id = pool_.String(token.text), .column = token.column};
    case TokenKind::kIdent:
      if (token.text == "defined" && Peek(1).kind == TokenKind::kLParen) return ParseDefined();
      Next();
      return Typed{.id = pool_.Ident(token.text), .column = token.column};
    case TokenKind::kLParen:
      return ParseParenthesized();
    default:
      Fail(token, "an expression");
      return std::nullopt;
  }
}

std::optional<Parser::Typed> Parser::ParseParenthesized() {
  const Token& open = Peek();
  if (!Nest(open)) return std::nullopt;
  Next();
  std::optional<Typed> inner = ParseOr();
  if (!inner.has_value()) return std::nullopt;
  if (!Expect(TokenKind::kRParen,
              "an operator or ')' to close the '(' at column " + std::to_string(open.column))) {
    return std::nullopt;
  }
  --depth_;
  inner->column = open.column;
  return inner;
}

std::optional<Parser::Typed> Parser::ParseDefined() {
  const Token& keyword = Next();
  Next();  // (
  const Token& name = Peek();
  if (name.kind != TokenKind::kIdent) {
    Fail(name, "a name inside defined(...)");
    return std::nullopt;
  }
  Next();
  if (!Expect(TokenKind::kRParen, "')' after the name in defined(...)")) return std::nullopt;
  return Typed{.id = pool_.Defined(name.text), .condition = true, .column = keyword.column};
}

std::optional<ExprId> Parser::AsCondition(const Typed& typed) {
  if (typed.condition) return typed.id;
  if (pool_.op(typed.id) == ExprOp::kIdent) return pool_.Tag(pool_.text(typed.id));
  FailAt(typed.column,
         "found a value where a condition is needed, expected a comparison (mem>4000), a tag "
         "name or defined(name)");
  return std::nullopt;
}

bool Parser::RequireValue(const Typed& typed) {
  if (!typed.condition) return true;
  return FailAt(typed.column,
                "found a condition where a value is needed, expected a number, a string or a "
                "name (comparisons and arithmetic take values)");
}

bool Parser::Nest(const Token& at) {
  if (depth_ < kMaxNesting) {
    ++depth_;
    return true;
  }
  return FailAt(at.column, "found " + Describe(at) + " nested more than " +
                               std::to_string(kMaxNesting) +
                               " levels deep, expected a simpler expression");
}

}  // namespace sluice::core::resreq::internal
