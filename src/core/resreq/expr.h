// ExprPool: the compiled, interned (hash-consed) form of `select[...]` expressions (R-RR-4).
//
// Purpose: every select expression of every job lives in one pool owned by the caller (the
// cluster state owns one). Structurally identical expressions get the same ExprId, and so do
// identical subexpressions, so the allocator can cache a result per (ExprId, host) and the
// unsatisfiable-request cache can compare requests by id.
//
// Representation:
//  - nodes_ is a dense vector addressed by ExprId; id 0 (kNoExpr) is reserved and means "true"
//    (no select). A node never changes or moves once created; ids are never reused.
//  - Leaves (kNumber, kString, kIdent, kDefined, kTag) carry a number or an interned text.
//  - kNeg and kNot have one operand; comparisons (kEq ... kGe) have two.
//  - Chains (kSum, kProduct, kAnd, kOr) have two or more operands, evaluated left to right.
//    `a - b + c` is one kSum with operands {a, -b, +c}: Operand::inverse marks a subtracted
//    term (kSum) or a divisor (kProduct). Chains keep flat runs flat, so a long `a || b || ...`
//    list costs no tree depth; a parenthesized chain stays a separate operand (`a + (b + c)` is
//    not `a + b + c`: floating-point addition is not associative).
//  - Every node stores a structural hash computed from its op, literal and the structural
//    hashes of its operands; it is independent of ids and of the pool's history, so
//    fingerprints built on it are the same in every pool and every process.
//  - by_hash_ maps a structural hash to the ids having it; an insert compares candidates
//    field by field, so hash collisions never merge different expressions.
// Invariants: operands of a node have smaller ids than the node; value-typed nodes (kNumber,
// kString, kIdent, kNeg, kSum, kProduct) only appear as operands of value-typed nodes or
// comparisons, and condition-typed nodes (comparisons, kNot, kAnd, kOr, kDefined, kTag) only
// as operands of kNot, kAnd and kOr (the parser guarantees it; SLUICE_CHECKed on insert).
// The pool only grows: its size is bounded by the total length of distinct expressions ever
// interned.
// Thread-safety: none; reads of a pool nobody writes are safe from several threads.
// Implements R-RR-4 (interning); the language is documented in docs/resreq.md.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::core::resreq {

using ExprId = uint32_t;
inline constexpr ExprId kNoExpr = 0;  // the absent select: always true

enum class ExprOp : uint8_t {
  kNumber,   // literal number
  kString,   // quoted string literal
  kIdent,    // bare word: a host resource or attribute, else its own text (docs/resreq.md)
  kNeg,      // unary minus
  kSum,      // a + b - c ...
  kProduct,  // a * b / c ...
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kNot,
  kAnd,
  kOr,
  kDefined,  // defined(name)
  kTag,      // a bare word used as a condition
};
inline constexpr ExprOp kAllExprOps[] = {
    ExprOp::kNumber,  ExprOp::kString, ExprOp::kIdent, ExprOp::kNeg, ExprOp::kSum,
    ExprOp::kProduct, ExprOp::kEq,     ExprOp::kNe,    ExprOp::kLt,  ExprOp::kLe,
    ExprOp::kGt,      ExprOp::kGe,     ExprOp::kNot,   ExprOp::kAnd, ExprOp::kOr,
    ExprOp::kDefined, ExprOp::kTag,
};
// "number", "sum", "==", "&&", ... (debug output and tests).
std::string_view ToString(ExprOp op);

bool IsComparison(ExprOp op);
bool IsChain(ExprOp op);
// True for ops whose value is a condition (true/false) rather than a number or string.
bool IsCondition(ExprOp op);

struct Operand {
  ExprId id = kNoExpr;
  bool inverse = false;  // kSum: subtract this term; kProduct: divide by it; else false

  friend bool operator==(const Operand&, const Operand&) = default;
};

class ExprPool {
 public:
  ExprPool();

  // --- Builders: return the id of the (new or existing) node. ---
  ExprId Number(double value);
  ExprId String(std::string_view text);
  ExprId Ident(std::string_view name);
  ExprId Defined(std::string_view name);
  ExprId Tag(std::string_view name);
  // REQUIRES: op is kNeg or kNot and `operand` has the matching type.
  ExprId Unary(ExprOp op, ExprId operand);
  // REQUIRES: IsComparison(op); both operands value-typed.
  ExprId Compare(ExprOp op, ExprId lhs, ExprId rhs);
  // REQUIRES: IsChain(op); at least two operands of the matching type; the first operand's
  // `inverse` is false; `inverse` is false everywhere for kAnd and kOr.
  ExprId Chain(ExprOp op, std::span<const Operand> operands);

  // --- Accessors. REQUIRES: 0 < id < size(). ---
  ExprOp op(ExprId id) const { return Node(id).op; }
  // kNumber only.
  double number(ExprId id) const { return Node(id).number; }
  // kString, kIdent, kDefined and kTag only: the literal text or the name.
  std::string_view text(ExprId id) const;
  // kNeg, kNot: one operand; comparisons: two; chains: two or more; leaves: none.
  std::span<const Operand> operands(ExprId id) const;
  // Deterministic across pools, processes and platforms; 0 for kNoExpr.
  uint64_t StructuralHash(ExprId id) const;

  // Number of ids handed out so far, including the reserved kNoExpr.
  size_t size() const { return nodes_.size(); }

 private:
  struct ExprNode {
    ExprOp op = ExprOp::kNumber;
    double number = 0;
    uint32_t text = 0;   // index into texts_ (leaves with a text)
    uint32_t first = 0;  // index into operands_
    uint32_t count = 0;  // number of operands
    uint64_t hash = 0;   // structural hash
  };

  const ExprNode& Node(ExprId id) const;
  uint32_t InternText(std::string_view text);
  ExprId Intern(ExprOp op, double number, uint32_t text, std::span<const Operand> operands);
  bool SameNode(ExprId id, ExprOp op, double number, uint32_t text,
                std::span<const Operand> operands) const;
  uint64_t HashOf(ExprOp op, double number, uint32_t text, std::span<const Operand> operands) const;

  std::vector<ExprNode> nodes_;
  std::vector<Operand> operands_;
  std::vector<std::string> texts_;
  std::map<std::string, uint32_t, std::less<>> text_ids_;  // texts_[text_ids_[t]] == t
  std::unordered_multimap<uint64_t, ExprId> by_hash_;      // lookup only, never iterated
};

}  // namespace sluice::core::resreq
