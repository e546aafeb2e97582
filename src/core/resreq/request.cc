#include "core/resreq/request.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>

#include "base/check.h"
#include "core/resreq/fingerprint.h"

namespace sluice::core::resreq {
namespace {

// Binding strength of each op when printed; an operand printed where a stronger binding is
// needed gets parentheses. Chains require their operands to bind strictly stronger than
// themselves, so that `(a && b) && c` and `a + (b + c)` keep their shape.
enum Precedence : int {
  kOrPrec = 1,
  kAndPrec = 2,
  kNotPrec = 3,
  kComparePrec = 4,
  kSumPrec = 5,
  kProductPrec = 6,
  kNegPrec = 7,
  kAtomPrec = 8,
};

int PrecedenceOf(ExprOp op) {
  switch (op) {
    case ExprOp::kOr:
      return kOrPrec;
    case ExprOp::kAnd:
      return kAndPrec;
    case ExprOp::kNot:
      return kNotPrec;
    case ExprOp::kSum:
      return kSumPrec;
    case ExprOp::kProduct:
      return kProductPrec;
    case ExprOp::kNeg:
      return kNegPrec;
    default:
      return IsComparison(op) ? kComparePrec : kAtomPrec;
  }
}

void AppendNumber(double value, std::string& out) {
  // Fixed notation (never `1e+27`: the lexer has no exponents); shortest digits that read
  // back to the same double. 400 bytes hold the longest fixed double (~330 characters).
  char buffer[400];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed);
  SLUICE_CHECK(result.ec == std::errc());
  out.append(buffer, result.ptr);
}

void AppendQuoted(std::string_view text, std::string& out) {
  // Strings have no escapes: a string can hold one kind of quote by using the other.
  const char quote = text.find('"') == std::string_view::npos ? '"' : '\'';
  out += quote;
  out += text;
  out += quote;
}

// Whether `text` lexes as one identifier (else it is printed quoted).
bool IsPlainName(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
}

void AppendExpr(ExprId id, const ExprPool& pool, int min_precedence, std::string& out);

void AppendOperands(ExprId id, const ExprPool& pool, std::string& out) {
  const ExprOp op = pool.op(id);
  const int operand_precedence = PrecedenceOf(op) + 1;
  bool first = true;
  for (const Operand& operand : pool.operands(id)) {
    if (!first) {
      switch (op) {
        case ExprOp::kSum:
          out += operand.inverse ? "-" : "+";
          break;
        case ExprOp::kProduct:
          out += operand.inverse ? "/" : "*";
          break;
        case ExprOp::kAnd:
          out += " && ";
          break;
        default:
          out += " || ";
          break;
      }
    }
    first = false;
    AppendExpr(operand.id, pool, operand_precedence, out);
  }
}

void AppendExpr(ExprId id, const ExprPool& pool, int min_precedence, std::string& out) {
  const ExprOp op = pool.op(id);
  const bool parenthesize = PrecedenceOf(op) < min_precedence;
  if (parenthesize) out += '(';
  switch (op) {
    case ExprOp::kNumber:
      AppendNumber(pool.number(id), out);
      break;
    case ExprOp::kString:
      AppendQuoted(pool.text(id), out);
      break;
    case ExprOp::kIdent:
    case ExprOp::kTag:
      out += pool.text(id);
      break;
    case ExprOp::kDefined:
      out += "defined(";
      out += pool.text(id);
      out += ')';
      break;
    case ExprOp::kNeg:
      out += '-';
      AppendExpr(pool.operands(id)[0].id, pool, kNegPrec, out);
      break;
    case ExprOp::kNot: {
      // `!a==b` already means `!(a==b)`; the parentheses are for the reader.
      const ExprId operand = pool.operands(id)[0].id;
      const bool comparison = IsComparison(pool.op(operand));
      out += comparison ? "!(" : "!";
      AppendExpr(operand, pool, comparison ? kOrPrec : kNotPrec, out);
      if (comparison) out += ')';
      break;
    }
    case ExprOp::kSum:
    case ExprOp::kProduct:
    case ExprOp::kAnd:
    case ExprOp::kOr:
      AppendOperands(id, pool, out);
      break;
    default: {  // comparisons
      const auto operands = pool.operands(id);
      AppendExpr(operands[0].id, pool, kSumPrec, out);
      out += ToString(op);
      AppendExpr(operands[1].id, pool, kSumPrec, out);
    }
  }
  if (parenthesize) out += ')';
}

void AppendPrimary(const Primary& primary, const ExprPool& pool, std::string& out) {
  const size_t start = out.size();
  auto section = [&](std::string_view name) {
    if (out.size() != start) out += ' ';
    out += name;
    out += '[';
  };
  if (primary.select != kNoExpr) {
    section("select");
    AppendExpr(primary.select, pool, kOrPrec, out);
    out += ']';
  }
  if (!primary.order.empty()) {
    section("order");
    for (size_t i = 0; i < primary.order.size(); ++i) {
      if (i > 0) out += ',';
      if (primary.order[i].descending) out += '-';
      out += primary.order[i].name;
    }
    out += ']';
  }
  if (!primary.rusage.empty()) {
    section("rusage");
    for (size_t i = 0; i < primary.rusage.size(); ++i) {
      if (i > 0) out += ':';
      out += primary.rusage[i].resource;
      out += '=';
      AppendNumber(primary.rusage[i].amount, out);
    }
    out += ']';
  }
  if (primary.span.kind == SpanKind::kOneHost) {
    section("span");
    out += "hosts=1]";
  } else if (primary.span.kind == SpanKind::kPtile) {
    section("span");
    out += "ptile=" + std::to_string(primary.span.ptile) + "]";
  }
  if (!primary.same.empty()) {
    section("same");
    out += primary.same;
    out += ']';
  }
  if (primary.gpu.num > 0) {
    const GpuRequest& gpu = primary.gpu;
    section("gpu");
    out += "num=" + std::to_string(gpu.num);
    if (gpu.per == GpuPer::kTask) out += "/task";
    if (gpu.shared) out += ":mode=shared";
    if (!gpu.model.empty()) {
      out += ":gmodel=";
      if (IsPlainName(gpu.model)) {
        out += gpu.model;
      } else {
        AppendQuoted(gpu.model, out);
      }
    }
    if (gpu.mem_mb > 0) out += ":gmem=" + std::to_string(gpu.mem_mb);
    if (gpu.link) out += ":glink=yes";
    if (gpu.affinity) out += ":aff=yes";
    out += ']';
  }
}

void AppendCompound(const Compound& compound, const ExprPool& pool, std::string& out) {
  for (size_t i = 0; i < compound.parts.size(); ++i) {
    const Primary& part = compound.parts[i];
    if (i > 0) out += " + ";
    if (part.count > 0) {
      out += std::to_string(part.count);
      out += "*{";
      AppendPrimary(part, pool, out);
      out += '}';
    } else {
      AppendPrimary(part, pool, out);
    }
  }
}

}  // namespace

std::string_view ToString(SpanKind kind) {
  switch (kind) {
    case SpanKind::kNone:
      return "none";
    case SpanKind::kOneHost:
      return "hosts=1";
    case SpanKind::kPtile:
      return "ptile";
  }
  return "internal";
}

bool Primary::Unconstrained() const {
  return select == kNoExpr && order.empty() && rusage.empty() && span.kind == SpanKind::kNone &&
         same.empty() && gpu.num == 0;
}

Request UnconstrainedRequest() {
  Request request;
  request.alternatives.push_back(Compound{.parts = {Primary{}}});
  UpdateFingerprints(request, ExprPool());
  return request;
}

uint64_t PrimaryFingerprint(const Primary& primary, const ExprPool& pool) {
  Fingerprinter hash;
  hash.Text("primary").I64(primary.count).U64(pool.StructuralHash(primary.select));
  hash.U64(primary.order.size());
  for (const OrderKey& key : primary.order) hash.Text(key.name).Byte(key.descending ? 1 : 0);
  hash.U64(primary.rusage.size());
  for (const Rusage& rusage : primary.rusage) hash.Text(rusage.resource).Double(rusage.amount);
  hash.Byte(static_cast<uint8_t>(primary.span.kind)).I64(primary.span.ptile);
  hash.Text(primary.same);
  if (primary.gpu.num > 0) {  // absent from older fingerprints, which stay as they were
    const GpuRequest& gpu = primary.gpu;
    hash.Text("gpu").I64(gpu.num).Byte(static_cast<uint8_t>(gpu.per)).Byte(gpu.shared ? 1 : 0);
    hash.I64(gpu.mem_mb).Text(gpu.model).Byte(gpu.link ? 1 : 0).Byte(gpu.affinity ? 1 : 0);
  }
  return hash.Finish();
}

uint64_t RequestFingerprint(const Request& request) {
  Fingerprinter hash;
  hash.Text("request").U64(request.alternatives.size());
  for (const Compound& compound : request.alternatives) {
    hash.U64(compound.parts.size());
    for (const Primary& part : compound.parts) hash.U64(part.fingerprint);
  }
  return hash.Finish();
}

void UpdateFingerprints(Request& request, const ExprPool& pool) {
  for (Compound& compound : request.alternatives) {
    for (Primary& part : compound.parts) part.fingerprint = PrimaryFingerprint(part, pool);
  }
  request.fingerprint = RequestFingerprint(request);
}

std::string Normalize(const Request& request, const ExprPool& pool) {
  std::string out;
  if (request.alternatives.size() == 1) {
    AppendCompound(request.alternatives[0], pool, out);
    return out;
  }
  for (size_t i = 0; i < request.alternatives.size(); ++i) {
    if (i > 0) out += " || ";
    out += '{';
    AppendCompound(request.alternatives[i], pool, out);
    out += '}';
  }
  return out;
}

std::string NormalizeExpr(ExprId id, const ExprPool& pool) {
  std::string out;
  if (id != kNoExpr) AppendExpr(id, pool, kOrPrec, out);
  return out;
}

}  // namespace sluice::core::resreq
