#include "core/resreq/expr.h"

#include <bit>

#include "base/check.h"
#include "core/resreq/fingerprint.h"

namespace sluice::core::resreq {

std::string_view ToString(ExprOp op) {
  switch (op) {
    case ExprOp::kNumber:
      return "number";
    case ExprOp::kString:
      return "string";
    case ExprOp::kIdent:
      return "identifier";
    case ExprOp::kNeg:
      return "negate";
    case ExprOp::kSum:
      return "sum";
    case ExprOp::kProduct:
      return "product";
    case ExprOp::kEq:
      return "==";
    case ExprOp::kNe:
      return "!=";
    case ExprOp::kLt:
      return "<";
    case ExprOp::kLe:
      return "<=";
    case ExprOp::kGt:
      return ">";
    case ExprOp::kGe:
      return ">=";
    case ExprOp::kNot:
      return "!";
    case ExprOp::kAnd:
      return "&&";
    case ExprOp::kOr:
      return "||";
    case ExprOp::kDefined:
      return "defined";
    case ExprOp::kTag:
      return "tag";
  }
  return "internal";
}

bool IsComparison(ExprOp op) {
  return op == ExprOp::kEq || op == ExprOp::kNe || op == ExprOp::kLt || op == ExprOp::kLe ||
         op == ExprOp::kGt || op == ExprOp::kGe;
}

bool IsChain(ExprOp op) {
  return op == ExprOp::kSum || op == ExprOp::kProduct || op == ExprOp::kAnd || op == ExprOp::kOr;
}

bool IsCondition(ExprOp op) {
  return IsComparison(op) || op == ExprOp::kNot || op == ExprOp::kAnd || op == ExprOp::kOr ||
         op == ExprOp::kDefined || op == ExprOp::kTag;
}

ExprPool::ExprPool() {
  nodes_.push_back(ExprNode{});  // kNoExpr
}

ExprId ExprPool::Number(double value) {
  if (value == 0.0) value = 0.0;  // one node for 0.0 and -0.0
  return Intern(ExprOp::kNumber, value, 0, {});
}

ExprId ExprPool::String(std::string_view text) {
  return Intern(ExprOp::kString, 0, InternText(text), {});
}

ExprId ExprPool::Ident(std::string_view name) {
  return Intern(ExprOp::kIdent, 0, InternText(name), {});
}

ExprId ExprPool::Defined(std::string_view name) {
  return Intern(ExprOp::kDefined, 0, InternText(name), {});
}

ExprId ExprPool::Tag(std::string_view name) {
  return Intern(ExprOp::kTag, 0, InternText(name), {});
}

ExprId ExprPool::Unary(ExprOp op, ExprId operand) {
  SLUICE_CHECK(op == ExprOp::kNeg || op == ExprOp::kNot);
  SLUICE_CHECK(IsCondition(this->op(operand)) == (op == ExprOp::kNot));
  const Operand operands[] = {{.id = operand}};
  return Intern(op, 0, 0, operands);
}

ExprId ExprPool::Compare(ExprOp op, ExprId lhs, ExprId rhs) {
  SLUICE_CHECK(IsComparison(op));
  SLUICE_CHECK(!IsCondition(this->op(lhs)) && !IsCondition(this->op(rhs)));
  const Operand operands[] = {{.id = lhs}, {.id = rhs}};
  return Intern(op, 0, 0, operands);
}

ExprId ExprPool::Chain(ExprOp op, std::span<const Operand> operands) {
  SLUICE_CHECK(IsChain(op));
  SLUICE_CHECK(operands.size() >= 2);
  SLUICE_CHECK(!operands[0].inverse);
  const bool conditions = op == ExprOp::kAnd || op == ExprOp::kOr;
  for (const Operand& operand : operands) {
    SLUICE_CHECK(IsCondition(this->op(operand.id)) == conditions);
    SLUICE_CHECK(!(conditions && operand.inverse));
  }
  return Intern(op, 0, 0, operands);
}

std::string_view ExprPool::text(ExprId id) const {
  const ExprNode& node = Node(id);
  SLUICE_CHECK(node.op == ExprOp::kString || node.op == ExprOp::kIdent ||
               node.op == ExprOp::kDefined || node.op == ExprOp::kTag);
  return texts_[node.text];
}

std::span<const Operand> ExprPool::operands(ExprId id) const {
  const ExprNode& node = Node(id);
  return std::span<const Operand>(operands_).subspan(node.first, node.count);
}

uint64_t ExprPool::StructuralHash(ExprId id) const { return id == kNoExpr ? 0 : Node(id).hash; }

const ExprPool::ExprNode& ExprPool::Node(ExprId id) const {
  SLUICE_CHECK(id != kNoExpr && id < nodes_.size());
  return nodes_[id];
}

uint32_t ExprPool::InternText(std::string_view text) {
  if (auto it = text_ids_.find(text); it != text_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(texts_.size());
  texts_.emplace_back(text);
  text_ids_.emplace(std::string(text), id);
  return id;
}

uint64_t ExprPool::HashOf(ExprOp op, double number, uint32_t text,
                          std::span<const Operand> operands) const {
  Fingerprinter hash;
  hash.Byte(static_cast<uint8_t>(op));
  switch (op) {
    case ExprOp::kNumber:
      hash.Double(number);
      break;
    case ExprOp::kString:
    case ExprOp::kIdent:
    case ExprOp::kDefined:
    case ExprOp::kTag:
      hash.Text(texts_[text]);
      break;
    default:
      hash.U64(operands.size());
      for (const Operand& operand : operands) {
        hash.Byte(operand.inverse ? 1 : 0).U64(nodes_[operand.id].hash);
      }
  }
  return hash.Finish();
}

bool ExprPool::SameNode(ExprId id, ExprOp op, double number, uint32_t text,
                        std::span<const Operand> operands) const {
  const ExprNode& node = nodes_[id];
  if (node.op != op || node.text != text || node.count != operands.size()) return false;
  if (std::bit_cast<uint64_t>(node.number) != std::bit_cast<uint64_t>(number)) return false;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands_[node.first + i] != operands[i]) return false;
  }
  return true;
}

ExprId ExprPool::Intern(ExprOp op, double number, uint32_t text,
                        std::span<const Operand> operands) {
  for (const Operand& operand : operands) {
    SLUICE_CHECK(operand.id != kNoExpr && operand.id < nodes_.size());
  }
  const uint64_t hash = HashOf(op, number, text, operands);
  auto [begin, end] = by_hash_.equal_range(hash);
  for (auto it = begin; it != end; ++it) {
    if (SameNode(it->second, op, number, text, operands)) return it->second;
  }
  const auto id = static_cast<ExprId>(nodes_.size());
  nodes_.push_back(ExprNode{.op = op,
                            .number = number,
                            .text = text,
                            .first = static_cast<uint32_t>(operands_.size()),
                            .count = static_cast<uint32_t>(operands.size()),
                            .hash = hash});
  operands_.insert(operands_.end(), operands.begin(), operands.end());
  by_hash_.emplace(hash, id);
  return id;
}

}  // namespace sluice::core::resreq
