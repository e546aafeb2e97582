// Requests, alternatives, compounds and the sections of a primary. Expressions inside
// select[] are in select_parser.cc, the keys of gpu[] in gpu_parser.cc.
#include "core/resreq/parser.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/resreq/parser_internal.h"

namespace sluice::core::resreq {
namespace internal {
namespace {

constexpr int32_t kMaxInt = std::numeric_limits<int32_t>::max();
constexpr std::string_view kSectionNames[] = {"select", "order", "rusage", "span", "same", "gpu"};
constexpr std::string_view kSectionList = "a section (select, order, rusage, span, same, gpu)";

std::string Ordinal(size_t n) {
  return std::to_string(n) + (n % 10 == 1 && n % 100 != 11   ? "st"
                              : n % 10 == 2 && n % 100 != 12 ? "nd"
                              : n % 10 == 3 && n % 100 != 13 ? "rd"
                                                             : "th");
}

// "found a 65th alternative, expected at most 64 alternatives".
std::string TooMany(size_t limit, std::string_view what, std::string_view plural) {
  return "found a " + Ordinal(limit + 1) + " " + std::string(what) + ", expected at most " +
         std::to_string(limit) + " " + std::string(plural);
}

}  // namespace

Parser::Parser(std::string_view text, ExprPool& pool) : pool_(pool), tokens_(Lex(text)) {}

bool Parser::ParseRequest(Request& request) {
  request = Request{};
  const TokenKind first = Peek().kind;
  if (first == TokenKind::kLBrace || first == TokenKind::kNumber) {
    return ParseAlternatives(request);
  }
  Primary primary;
  if (!ParsePrimary(primary)) return false;
  if (Peek().kind == TokenKind::kOrOr) {
    return FailAt(Peek().column,
                  "found '||' after a request without braces, expected end of input "
                  "(write alternatives as {...} || {...})");
  }
  if (!Expect(TokenKind::kEnd, std::string(kSectionList) + " or end of input")) return false;
  request.alternatives.push_back(Compound{.parts = {std::move(primary)}});
  return true;
}

bool Parser::ParseAlternatives(Request& request) {
  do {
    if (request.alternatives.size() == kMaxAlternatives) {
      return FailAt(Peek().column, TooMany(kMaxAlternatives, "alternative", "alternatives"));
    }
    Compound compound;
    if (!ParseAlternative(compound)) return false;
    request.alternatives.push_back(std::move(compound));
  } while (Accept(TokenKind::kOrOr));
  return Expect(TokenKind::kEnd, "'||' or end of input");
}

bool Parser::ParseAlternative(Compound& compound) {
  if (!Accept(TokenKind::kLBrace)) return ParseCompound(compound);
  if (Peek().kind == TokenKind::kNumber) {
    return ParseCompound(compound) && Expect(TokenKind::kRBrace, "'+' or '}'");
  }
  Primary primary;
  if (!ParsePrimary(primary)) return false;
  if (!Expect(TokenKind::kRBrace, std::string(kSectionList) + " or '}'")) return false;
  compound.parts.push_back(std::move(primary));
  return true;
}

bool Parser::ParseCompound(Compound& compound) {
  do {
    if (compound.parts.size() == kMaxParts) {
      return FailAt(Peek().column, TooMany(kMaxParts, "compound part", "compound parts"));
    }
    Primary part;
    if (!ParsePart(part)) return false;
    compound.parts.push_back(std::move(part));
  } while (Accept(TokenKind::kPlus));
  return true;
}

bool Parser::ParsePart(Primary& part) {
  if (Peek().kind != TokenKind::kNumber) return Fail(Peek(), "'{' or a count (N*{...})");
  if (!ParseInteger(1, kMaxInt, "the task count", part.count)) return false;
  if (!Expect(TokenKind::kStar, "'*' after the count")) return false;
  if (!Expect(TokenKind::kLBrace, "'{' after '*'")) return false;
  if (!ParsePrimary(part)) return false;
  return Expect(TokenKind::kRBrace, std::string(kSectionList) + " or '}'");
}

bool Parser::ParsePrimary(Primary& primary) {
  uint32_t seen = 0;
  while (Peek().kind == TokenKind::kIdent) {
    if (!ParseSection(primary, seen)) return false;
  }
  return true;
}

bool Parser::ParseSection(Primary& primary, uint32_t& seen) {
  const Token& name = Peek();
  const auto* found = std::find(std::begin(kSectionNames), std::end(kSectionNames), name.text);
  if (found == std::end(kSectionNames)) return Fail(name, kSectionList);
  const uint32_t bit = 1u << (found - std::begin(kSectionNames));
  if ((seen & bit) != 0) {
    return FailAt(name.column, "found a second " + Quote(name.text) +
                                   " section, expected each section at most once");
  }
  seen |= bit;
  Next();
  if (!Expect(TokenKind::kLBracket, "'[' after " + Quote(name.text))) return false;
  switch (found - std::begin(kSectionNames)) {
    case 0:
      return ParseSelect(primary);
    case 1:
      return ParseOrder(primary);
    case 2:
      return ParseRusage(primary);
    case 3:
      return ParseSpan(primary);
    case 4:
      return ParseSame(primary);
    default:
      return ParseGpu(primary);
  }
}

bool Parser::ParseSelect(Primary& primary) {
  std::optional<ExprId> select = ParseCondition();
  if (!select.has_value()) return false;
  primary.select = *select;
  return Expect(TokenKind::kRBracket, "an operator or ']'");
}

bool Parser::ParseOrder(Primary& primary) {
  do {
    if (primary.order.size() == kMaxOrderKeys) {
      return FailAt(Peek().column, TooMany(kMaxOrderKeys, "order key", "order keys"));
    }
    OrderKey key;
    if (Accept(TokenKind::kMinus)) {
      key.descending = true;
    } else {
      Accept(TokenKind::kPlus);
    }
    const Token& name = Peek();
    if (name.kind != TokenKind::kIdent) {
      return Fail(name, "an order key (a name, optionally after - or +)");
    }
    Next();
    key.name = std::string(name.text);
    for (const OrderKey& other : primary.order) {
      if (other.name == key.name) {
        return FailAt(name.column, "found " + Quote(name.text) +
                                       " a second time, expected each order key at most once");
      }
    }
    primary.order.push_back(std::move(key));
  } while (Accept(TokenKind::kComma) || Accept(TokenKind::kColon));
  return Expect(TokenKind::kRBracket, "',' or ']'");
}

bool Parser::ParseRusage(Primary& primary) {
  do {
    if (primary.rusage.size() == kMaxRusage) {
      return FailAt(Peek().column, TooMany(kMaxRusage, "rusage entry", "rusage entries"));
    }
    if (!ParseRusageEntry(primary)) return false;
  } while (Accept(TokenKind::kColon) || Accept(TokenKind::kComma));
  return Expect(TokenKind::kRBracket, "':' or ']'");
}

bool Parser::ParseRusageEntry(Primary& primary) {
  const Token& name = Peek();
  if (name.kind != TokenKind::kIdent) return Fail(name, "a resource name");
  Next();
  if (!Expect(TokenKind::kAssign, "'=' after the resource name")) return false;
  if (Peek().kind == TokenKind::kMinus) {
    return FailAt(Peek().column,
                  "found a negative amount for " + Quote(name.text) + ", expected an amount >= 0");
  }
  const Token& amount = Peek();
  if (amount.kind != TokenKind::kNumber) return Fail(amount, "an amount (a number >= 0)");
  Next();
  Rusage entry{.resource = std::string(name.text), .amount = amount.number};
  auto it =
      std::lower_bound(primary.rusage.begin(), primary.rusage.end(), entry,
                       [](const Rusage& a, const Rusage& b) { return a.resource < b.resource; });
  if (it != primary.rusage.end() && it->resource == entry.resource) {
    return FailAt(name.column, "found a second " + Quote(name.text) +
                                   " entry, expected each resource at most once");
  }
  primary.rusage.insert(it, std::move(entry));
  return true;
}

bool Parser::ParseSpan(Primary& primary) {
  const Token& key = Peek();
  const bool hosts = key.kind == TokenKind::kIdent && key.text == "hosts";
  const bool ptile = key.kind == TokenKind::kIdent && key.text == "ptile";
  if (!hosts && !ptile) return Fail(key, "'hosts' or 'ptile'");
  Next();
  if (!Expect(TokenKind::kAssign, "'=' after " + Quote(key.text))) return false;
  if (hosts) {
    const Token& value = Peek();
    int32_t count = 0;
    if (!ParseInteger(1, kMaxInt, "the host count", count)) return false;
    if (count != 1) {
      return FailAt(value.column, "found hosts=" + std::string(value.text) +
                                      ", expected hosts=1 (the only host count supported; use "
                                      "span[ptile=K] to spread tasks over hosts)");
    }
    primary.span = Span{.kind = SpanKind::kOneHost};
  } else {
    int32_t tasks = 0;
    if (!ParseInteger(1, kMaxInt, "the ptile: tasks per host", tasks)) return false;
    primary.span = Span{.kind = SpanKind::kPtile, .ptile = tasks};
  }
  return Expect(TokenKind::kRBracket, "']'");
}

bool Parser::ParseSame(Primary& primary) {
  const Token& name = Peek();
  if (name.kind != TokenKind::kIdent) return Fail(name, "an attribute name");
  Next();
  primary.same = std::string(name.text);
  return Expect(TokenKind::kRBracket, "']' (same[] takes one attribute name)");
}

bool Parser::ParseInteger(int32_t min, int32_t max, std::string_view what, int32_t& value) {
  const Token& token = Peek();
  const std::string noun = " (" + std::string(what) + ")";
  if (token.kind != TokenKind::kNumber) return Fail(token, "a whole number" + noun);
  const std::string found = "found " + Describe(token) + ", expected a whole number";
  if (token.text.find('.') != std::string_view::npos) return FailAt(token.column, found + noun);
  if (token.number < min) {
    return FailAt(token.column, found + " >= " + std::to_string(min) + noun);
  }
  if (token.number > max) {
    return FailAt(token.column, found + " <= " + std::to_string(max) + noun);
  }
  value = static_cast<int32_t>(token.number);
  Next();
  return true;
}

const Token& Parser::Peek(size_t ahead) const {
  // The last token is kEnd or kError; the parser never moves past it.
  return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

const Token& Parser::Next() {
  const Token& token = Peek();
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return token;
}

bool Parser::Accept(TokenKind kind) {
  if (Peek().kind != kind) return false;
  Next();
  return true;
}

bool Parser::Expect(TokenKind kind, std::string_view expected) {
  if (Accept(kind)) return true;
  return Fail(Peek(), expected);
}

bool Parser::Fail(const Token& at, std::string_view expected) {
  if (at.kind == TokenKind::kError) return FailAt(at.column, at.error);
  return FailAt(at.column, "found " + Describe(at) + ", expected " + std::string(expected));
}

bool Parser::FailAt(int32_t column, std::string message) {
  if (!failed_) {
    failed_ = true;
    error_ = ParseError{.column = column, .message = std::move(message)};
  }
  return false;
}

}  // namespace internal

Result<Request> Parse(std::string_view text, ExprPool& pool, ParseError* error) {
  ParseError failure;
  if (text.size() > kMaxInputBytes) {
    failure = ParseError{.column = static_cast<int32_t>(kMaxInputBytes + 1),
                         .message = "found more than " + std::to_string(kMaxInputBytes) +
                                    " bytes, expected a request of at most " +
                                    std::to_string(kMaxInputBytes) + " bytes"};
  } else {
    internal::Parser parser(text, pool);
    Request request;
    if (parser.ParseRequest(request)) {
      UpdateFingerprints(request, pool);
      return request;
    }
    failure = parser.error();
  }
  Status status =
      InvalidArgument("column " + std::to_string(failure.column) + ": " + failure.message);
  if (error != nullptr) *error = std::move(failure);
  return status;
}

}  // namespace sluice::core::resreq
