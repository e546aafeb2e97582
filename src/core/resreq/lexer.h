// Lexer for the resource request language (SPEC §3; tokens listed in docs/resreq.md).
//
// Representation: Lex() turns the whole input into a vector of tokens ending with exactly one
// kEnd or kError token. Tokens hold views into the input (the input must outlive them) and the
// 1-based byte column where they start. A lexical error does not stop at once: it becomes a
// kError token carrying the message, so the parser reports whichever error comes first in the
// text (a syntax error before a bad character wins).
// Lexical rules:
//  - whitespace (space, tab, CR, LF) separates tokens and is otherwise ignored;
//  - identifiers: a letter or `_`, then letters, digits, `_` and `.` (`x86_64`, `rhel8.4`).
//    `-` is not part of a name (`mem-100` is a subtraction): quote such values
//    (`model=="xeon-6248"`);
//  - numbers: digits with an optional fraction (`4000`, `0.5`), then optionally a memory unit
//    as LSF writes it, `KB`, `MB`, `GB` or `TB` (also `K`, `M`, `G`, `T`, any case): the
//    number is then in megabytes, LSF's default unit (`4GB` is 4096, `512KB` 0.5); `text`
//    keeps the unit. No sign (a leading `-` is an operator), no exponent, no other suffix
//    (`4000XB` is an error);
//  - strings: `"..."` or `'...'`, without escapes (a string holding `"` uses `'...'`); an
//    unclosed string is an error;
//  - operators and punctuation: `[ ] { } ( ) , : = == != < <= > >= + - * / ! && ||`.
// Invariants: the token count is at most the input length + 1; lexing is linear time.
// Thread-safety: pure functions.
// Implements the lexical part of R-RR-1 and R-RR-5, and R-COMPAT-1's memory units.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::core::resreq {

enum class TokenKind : uint8_t {
  kEnd,
  kError,
  kIdent,
  kNumber,
  kString,
  kLBracket,  // [
  kRBracket,  // ]
  kLBrace,    // {
  kRBrace,    // }
  kLParen,    // (
  kRParen,    // )
  kComma,     // ,
  kColon,     // :
  kAssign,    // =
  kEq,        // ==
  kNe,        // !=
  kLt,        // <
  kLe,        // <=
  kGt,        // >
  kGe,        // >=
  kPlus,      // +
  kMinus,     // -
  kStar,      // *
  kSlash,     // /
  kBang,      // !
  kAndAnd,    // &&
  kOrOr,      // ||
};
inline constexpr TokenKind kAllTokenKinds[] = {
    TokenKind::kEnd,    TokenKind::kError,    TokenKind::kIdent,    TokenKind::kNumber,
    TokenKind::kString, TokenKind::kLBracket, TokenKind::kRBracket, TokenKind::kLBrace,
    TokenKind::kRBrace, TokenKind::kLParen,   TokenKind::kRParen,   TokenKind::kComma,
    TokenKind::kColon,  TokenKind::kAssign,   TokenKind::kEq,       TokenKind::kNe,
    TokenKind::kLt,     TokenKind::kLe,       TokenKind::kGt,       TokenKind::kGe,
    TokenKind::kPlus,   TokenKind::kMinus,    TokenKind::kStar,     TokenKind::kSlash,
    TokenKind::kBang,   TokenKind::kAndAnd,   TokenKind::kOrOr,
};
// A short name for messages: "end of input", "identifier", "']'", "'&&'", ...
std::string_view ToString(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEnd;
  int32_t column = 1;     // 1-based byte column of the first character
  std::string_view text;  // as written; kString: without the quotes; kError: the bad text
  double number = 0;      // kNumber only (in megabytes when written with a unit)
  std::string error;      // kError only: "found ..., expected ..."
};

// Splits `text` into tokens. REQUIRES: text.size() <= kMaxInputBytes (the parser checks).
std::vector<Token> Lex(std::string_view text);

// How a token is named in "found ..." messages: `'select'`, `'4000'`, `"linux"` (strings keep
// their quotes), `end of input`. Long texts are cut to 24 bytes plus `...`; bytes outside
// printable ASCII are shown as `\xNN`.
std::string Describe(const Token& token);
// The same quoting for a raw piece of input (used for lexical errors).
std::string Quote(std::string_view text);

}  // namespace sluice::core::resreq
