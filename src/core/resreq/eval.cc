#include "core/resreq/eval.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

namespace sluice::core::resreq {
namespace {

// The value of a value-typed expression on one host.
struct Value {
  enum class Kind { kUndefined, kNumber, kString, kWord };
  Kind kind = Kind::kUndefined;
  double number = 0;        // kNumber; kString when has_number
  bool has_number = false;  // kString: the text is a finite number (attributes only)
  std::string_view text;    // kString, kWord
  bool from_host = false;   // resolved from the host (not a literal)
  bool free = false;        // a free amount, or computed from one (then not memoizable)
};

Value Undefined(bool free = false) { return Value{.free = free}; }
Value Number(double number, bool from_host, bool free = false) {
  if (!std::isfinite(number)) return Undefined(free);
  return Value{
      .kind = Value::Kind::kNumber, .number = number, .from_host = from_host, .free = free};
}

std::optional<double> ParseNumber(std::string_view text) {
  double number = 0;
  const char* end = text.data() + text.size();
  auto result = std::from_chars(text.data(), end, number);
  if (text.empty() || result.ec != std::errc() || result.ptr != end) return std::nullopt;
  if (!std::isfinite(number)) return std::nullopt;
  return number;
}

// Step 1: free amount; step 2: `max<res>` total; step 3: attribute; else the word itself.
Value Resolve(std::string_view name, const HostView& host) {
  if (std::optional<double> free = host.Free(name)) return Number(*free, true, /*free=*/true);
  if (name.size() > 3 && name.starts_with("max")) {
    if (std::optional<double> total = host.Total(name.substr(3))) return Number(*total, true);
  }
  if (std::optional<std::string_view> text = host.Attribute(name)) {
    Value value{.kind = Value::Kind::kString, .text = *text, .from_host = true};
    if (std::optional<double> number = ParseNumber(*text)) {
      value.has_number = true;
      value.number = *number;
    }
    return value;
  }
  return Value{.kind = Value::Kind::kWord, .text = name};
}

std::optional<double> AsNumber(const Value& value) {
  if (value.kind == Value::Kind::kNumber) return value.number;
  if (value.kind == Value::Kind::kString && value.has_number) return value.number;
  return std::nullopt;
}

Value EvalValue(ExprId id, const ExprPool& pool, const HostView& host);

Value EvalChain(ExprId id, const ExprPool& pool, const HostView& host) {
  const bool sum = pool.op(id) == ExprOp::kSum;
  double result = 0;
  bool from_host = false;
  bool free = false;
  bool first = true;
  for (const Operand& operand : pool.operands(id)) {
    const Value value = EvalValue(operand.id, pool, host);
    free = free || value.free;
    const std::optional<double> number = AsNumber(value);
    if (!number.has_value()) return Undefined(free);
    from_host = from_host || value.from_host;
    if (first) {
      result = *number;
      first = false;
    } else if (sum) {
      result = operand.inverse ? result - *number : result + *number;
    } else if (operand.inverse) {
      if (*number == 0) return Undefined(free);
      result /= *number;
    } else {
      result *= *number;
    }
    if (!std::isfinite(result)) return Undefined(free);
  }
  return Number(result, from_host, free);
}

Value EvalValue(ExprId id, const ExprPool& pool, const HostView& host) {
  switch (pool.op(id)) {
    case ExprOp::kNumber:
      return Number(pool.number(id), false);
    case ExprOp::kString:
      return Value{.kind = Value::Kind::kString, .text = pool.text(id)};
    case ExprOp::kIdent:
      return Resolve(pool.text(id), host);
    case ExprOp::kNeg: {
      const Value value = EvalValue(pool.operands(id)[0].id, pool, host);
      const std::optional<double> number = AsNumber(value);
      return number.has_value() ? Number(-*number, value.from_host, value.free)
                                : Undefined(value.free);
    }
    case ExprOp::kSum:
    case ExprOp::kProduct:
      return EvalChain(id, pool, host);
    default:
      return Undefined();  // conditions never appear here (ExprPool invariant)
  }
}

// A bare word stands for its own text only against a value the host supplied.
bool WordAgainst(Value& word, const Value& other) {
  if (word.kind != Value::Kind::kWord) return true;
  if (!other.from_host || other.kind == Value::Kind::kWord) return false;
  word.kind = Value::Kind::kString;
  return true;
}

template <typename T>
bool Holds(ExprOp op, const T& a, const T& b) {
  switch (op) {
    case ExprOp::kEq:
      return a == b;
    case ExprOp::kNe:
      return a != b;
    case ExprOp::kLt:
      return a < b;
    case ExprOp::kLe:
      return a <= b;
    case ExprOp::kGt:
      return a > b;
    default:
      return a >= b;  // kGe
  }
}

// Shortest text of a number, for comparing it with a string.
std::string_view TextOf(const Value& value, char (&buffer)[32]) {
  if (value.kind != Value::Kind::kNumber) return value.text;
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value.number);
  return std::string_view(buffer, result.ptr - buffer);
}

bool EvalComparison(ExprId id, const ExprPool& pool, const HostView& host, bool& read_free) {
  const auto operands = pool.operands(id);
  Value lhs = EvalValue(operands[0].id, pool, host);
  Value rhs = EvalValue(operands[1].id, pool, host);
  // LSF style: a bare word compared with a text attribute is that word, even when the word
  // also names something of the host (`type==gpu` on a host with a gpu resource).
  auto literal_against_text = [&](ExprId word, const Value& other, Value& value) {
    if (pool.op(word) == ExprOp::kIdent && other.kind == Value::Kind::kString && other.from_host &&
        !other.has_number) {
      value = Value{.kind = Value::Kind::kString, .text = pool.text(word)};
    }
  };
  literal_against_text(operands[1].id, lhs, rhs);
  literal_against_text(operands[0].id, rhs, lhs);
  // A free amount replaced by its word above does not count: `type==gpu` is static.
  read_free = read_free || lhs.free || rhs.free;
  if (lhs.kind == Value::Kind::kUndefined || rhs.kind == Value::Kind::kUndefined) return false;
  if (!WordAgainst(lhs, rhs) || !WordAgainst(rhs, lhs)) return false;
  const std::optional<double> lhs_number = AsNumber(lhs);
  const std::optional<double> rhs_number = AsNumber(rhs);
  if (lhs_number.has_value() && rhs_number.has_value()) {
    return Holds(pool.op(id), *lhs_number, *rhs_number);
  }
  char lhs_buffer[32];
  char rhs_buffer[32];
  return Holds(pool.op(id), TextOf(lhs, lhs_buffer), TextOf(rhs, rhs_buffer));
}

bool EvalTag(std::string_view name, const HostView& host, bool& read_free) {
  if (host.HasTag(name)) return true;
  const Value value = Resolve(name, host);
  read_free = read_free || value.free;
  const std::optional<double> number = AsNumber(value);
  return number.has_value() && *number != 0;
}

void CollectNames(ExprId id, const ExprPool& pool, std::vector<std::string_view>& names) {
  switch (pool.op(id)) {
    case ExprOp::kIdent:
    case ExprOp::kTag:
    case ExprOp::kDefined:
      names.push_back(pool.text(id));
      return;
    default:
      for (const Operand& operand : pool.operands(id)) CollectNames(operand.id, pool, names);
  }
}

}  // namespace

bool EvalSelect(ExprId id, const ExprPool& pool, const HostView& host) {
  bool read_free = false;
  return EvalSelect(id, pool, host, read_free);
}

// The verdict is a function of the operands evaluated (short-circuit included), so it reads
// a free amount exactly when one of them did.
bool EvalSelect(ExprId id, const ExprPool& pool, const HostView& host, bool& read_free) {
  if (id == kNoExpr) return true;
  const ExprOp op = pool.op(id);
  switch (op) {
    case ExprOp::kNot:
      return !EvalSelect(pool.operands(id)[0].id, pool, host, read_free);
    case ExprOp::kAnd:
      for (const Operand& operand : pool.operands(id)) {
        if (!EvalSelect(operand.id, pool, host, read_free)) return false;
      }
      return true;
    case ExprOp::kOr:
      for (const Operand& operand : pool.operands(id)) {
        if (EvalSelect(operand.id, pool, host, read_free)) return true;
      }
      return false;
    case ExprOp::kDefined: {
      // Whether a host defines a resource is configuration, not a free amount.
      const std::string_view name = pool.text(id);
      return Resolve(name, host).kind != Value::Kind::kWord || host.HasTag(name);
    }
    case ExprOp::kTag:
      return EvalTag(pool.text(id), host, read_free);
    default:
      if (IsComparison(op)) return EvalComparison(id, pool, host, read_free);
      return false;  // values never appear here (ExprPool invariant)
  }
}

std::optional<double> EvalOrderKey(const OrderKey& key, const HostView& host) {
  return AsNumber(Resolve(key.name, host));
}

std::vector<std::string_view> ReferencedNames(ExprId id, const ExprPool& pool) {
  std::vector<std::string_view> names;
  if (id == kNoExpr) return names;
  CollectNames(id, pool, names);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace sluice::core::resreq
