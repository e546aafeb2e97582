// Parser: the recursive-descent parser behind Parse() (parser.h), split over two files:
// parser.cc (requests, compounds, sections), select_parser.cc (select[] expressions) and
// gpu_parser.cc (gpu[] keys).
//
// Representation: the token vector from Lex() and a cursor. Every Parse* method returns false
// or nullopt after recording the first error (Fail); callers then return at once, so an error
// unwinds without exceptions. `depth_` counts the open parentheses, `!` and unary `-` of the
// current select expression; recursion never exceeds a constant times kMaxNesting.
// Internal to core/resreq; not part of the API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/resreq/expr.h"
#include "core/resreq/lexer.h"
#include "core/resreq/parser.h"
#include "core/resreq/request.h"

namespace sluice::core::resreq::internal {

class Parser {
 public:
  Parser(std::string_view text, ExprPool& pool);

  // REQUIRES: text.size() <= kMaxInputBytes. Fills `request` or returns false; see error().
  bool ParseRequest(Request& request);
  const ParseError& error() const { return error_; }

 private:
  // A parsed subexpression: its id, whether it is a condition, and where it starts.
  struct Typed {
    ExprId id = kNoExpr;
    bool condition = false;
    int32_t column = 0;
  };

  // Request structure (parser.cc).
  bool ParseAlternatives(Request& request);
  bool ParseAlternative(Compound& compound);
  bool ParseCompound(Compound& compound);
  bool ParsePart(Primary& part);
  // Sections up to the first token that does not start one; `seen` guards duplicates.
  bool ParsePrimary(Primary& primary);
  bool ParseSection(Primary& primary, uint32_t& seen);
  bool ParseSelect(Primary& primary);
  bool ParseOrder(Primary& primary);
  bool ParseRusage(Primary& primary);
  bool ParseRusageEntry(Primary& primary);
  bool ParseSpan(Primary& primary);
  bool ParseSame(Primary& primary);
  // gpu[...] (gpu_parser.cc): `key=value` entries separated by ':'.
  bool ParseGpu(Primary& primary);
  bool ParseGpuEntry(GpuRequest& gpu, uint32_t& seen, bool& job_exclusive);
  bool ParseYesNo(std::string_view key, bool& value);
  // A whole number in [min, max]; `what` names it in the message ("the task count").
  bool ParseInteger(int32_t min, int32_t max, std::string_view what, int32_t& value);

  // Expressions (select_parser.cc). ParseCondition is a whole select[...] body; it stops
  // before the first token it cannot use. The others go from loosest binding to tightest.
  std::optional<ExprId> ParseCondition();
  std::optional<Typed> ParseOr();
  std::optional<Typed> ParseAnd();
  std::optional<Typed> ParseNot();
  std::optional<Typed> ParseComparison();
  std::optional<Typed> ParseSum();
  std::optional<Typed> ParseProduct();
  std::optional<Typed> ParseUnary();
  std::optional<Typed> ParseAtom();
  std::optional<Typed> ParseParenthesized();
  std::optional<Typed> ParseDefined();
  // A bare name becomes a tag test; another value is an error.
  std::optional<ExprId> AsCondition(const Typed& typed);
  bool RequireValue(const Typed& typed);
  // Enters one nesting level at `at`; false (error recorded) beyond kMaxNesting.
  bool Nest(const Token& at);

  // Token cursor.
  const Token& Peek(size_t ahead = 0) const;
  const Token& Next();
  bool Accept(TokenKind kind);
  // Consumes a token of `kind`, or fails with "found X, expected <expected>".
  bool Expect(TokenKind kind, std::string_view expected);

  // Records "found <token>, expected <expected>" (or the lexer's message for a kError token)
  // unless an error is already recorded. Always returns false.
  bool Fail(const Token& at, std::string_view expected);
  // Records `message` at `column` unless an error is already recorded. Returns false.
  bool FailAt(int32_t column, std::string message);

  ExprPool& pool_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  ParseError error_;
  bool failed_ = false;
};

}  // namespace sluice::core::resreq::internal
