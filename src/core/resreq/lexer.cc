#include "core/resreq/lexer.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <system_error>

namespace sluice::core::resreq {
namespace {

constexpr size_t kMaxQuotedBytes = 24;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsNameStart(char c) { return IsLetter(c) || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c) || c == '.'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// A memory unit after a number, as LSF writes them (`rusage[mem=4GB]`): the factor that turns
// the number into megabytes, LSF's default unit. Upper or lower case, with or without the `B`.
std::optional<double> UnitScale(std::string_view unit) {
  struct Unit {
    char letter;
    double megabytes;
  };
  constexpr Unit kUnits[] = {{'K', 1.0 / 1024}, {'M', 1}, {'G', 1024}, {'T', 1024.0 * 1024}};
  if (unit.empty() || unit.size() > 2) return std::nullopt;
  const auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; };
  if (unit.size() == 2 && upper(unit[1]) != 'B') return std::nullopt;
  for (const Unit& u : kUnits) {
    if (upper(unit[0]) == u.letter) return u.megabytes;
  }
  return std::nullopt;
}

struct Punctuation {
  std::string_view text;
  TokenKind kind;
};
// Two-character operators first, so that `<=` is not read as `<` `=`.
constexpr Punctuation kPunctuation[] = {
    {"==", TokenKind::kEq},      {"!=", TokenKind::kNe},      {"<=", TokenKind::kLe},
    {">=", TokenKind::kGe},      {"&&", TokenKind::kAndAnd},  {"||", TokenKind::kOrOr},
    {"[", TokenKind::kLBracket}, {"]", TokenKind::kRBracket}, {"{", TokenKind::kLBrace},
    {"}", TokenKind::kRBrace},   {"(", TokenKind::kLParen},   {")", TokenKind::kRParen},
    {",", TokenKind::kComma},    {":", TokenKind::kColon},    {"=", TokenKind::kAssign},
    {"<", TokenKind::kLt},       {">", TokenKind::kGt},       {"+", TokenKind::kPlus},
    {"-", TokenKind::kMinus},    {"*", TokenKind::kStar},     {"/", TokenKind::kSlash},
    {"!", TokenKind::kBang},
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> Run() {
    std::vector<Token> tokens;
    while (true) {
      while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
      Token token = Next();
      const TokenKind kind = token.kind;
      tokens.push_back(std::move(token));
      if (kind == TokenKind::kEnd || kind == TokenKind::kError) return tokens;
    }
  }

 private:
  Token Make(TokenKind kind, size_t start, size_t end) {
    pos_ = end;
    return Token{.kind = kind,
                 .column = static_cast<int32_t>(start + 1),
                 .text = text_.substr(start, end - start)};
  }

  Token Error(size_t start, size_t end, std::string error) {
    Token token = Make(TokenKind::kError, start, end);
    token.error = std::move(error);
    return token;
  }

  Token Next() {
    const size_t start = pos_;
    if (start == text_.size()) return Make(TokenKind::kEnd, start, start);
    const char c = text_[start];
    if (IsNameStart(c)) {
      size_t end = start + 1;
      while (end < text_.size() && IsNameChar(text_[end])) ++end;
      return Make(TokenKind::kIdent, start, end);
    }
    if (IsDigit(c)) return LexNumber(start);
    if (c == '"' || c == '\'') return LexString(start);
    for (const Punctuation& p : kPunctuation) {
      if (text_.substr(start).starts_with(p.text)) {
        return Make(p.kind, start, start + p.text.size());
      }
    }
    const std::string found = Quote(text_.substr(start, 1));
    if (c == '&') return Error(start, start + 1, "found " + found + ", expected '&&'");
    if (c == '|') return Error(start, start + 1, "found " + found + ", expected '||'");
    return Error(start, start + 1,
                 "found " + found + ", expected a name, a number, a string or an operator");
  }

  Token LexNumber(size_t start) {
    size_t end = start;
    while (end < text_.size() && IsDigit(text_[end])) ++end;
    if (end < text_.size() && text_[end] == '.') {
      ++end;
      if (end == text_.size() || !IsDigit(text_[end])) {
        return Error(start, end,
                     "found " + Quote(text_.substr(start, end - start)) +
                         ", expected a digit after the decimal point");
      }
      while (end < text_.size() && IsDigit(text_[end])) ++end;
    }
    double scale = 1;
    size_t word_end = end;
    while (word_end < text_.size() && IsNameChar(text_[word_end])) ++word_end;
    if (word_end > end) {
      const std::optional<double> unit = UnitScale(text_.substr(end, word_end - end));
      if (!unit) {
        return Error(start, word_end,
                     "found " + Quote(text_.substr(start, word_end - start)) +
                         ", expected a number, optionally with a unit (KB, MB, GB or TB)");
      }
      scale = *unit;
    }
    const std::string_view digits = text_.substr(start, end - start);
    Token token = Make(TokenKind::kNumber, start, word_end);
    auto result = std::from_chars(digits.data(), digits.data() + digits.size(), token.number,
                                  std::chars_format::fixed);
    token.number *= scale;
    if (result.ec != std::errc() || !std::isfinite(token.number)) {
      return Error(start, word_end,
                   "found " + Quote(token.text) + ", expected a number below 1e308");
    }
    return token;
  }

  Token LexString(size_t start) {
    const char quote = text_[start];
    const size_t close = text_.find(quote, start + 1);
    if (close == std::string_view::npos) {
      return Error(start, text_.size(),
                   std::string("found an unclosed string, expected a closing ") + quote);
    }
    Token token = Make(TokenKind::kString, start, close + 1);
    token.text = text_.substr(start + 1, close - start - 1);
    return token;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::string_view ToString(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kError:
      return "invalid input";
    case TokenKind::kIdent:
      return "name";
    case TokenKind::kNumber:
      return "number";
    case TokenKind::kString:
      return "string";
    case TokenKind::kLBracket:
      return "'['";
    case TokenKind::kRBracket:
      return "']'";
    case TokenKind::kLBrace:
      return "'{'";
    case TokenKind::kRBrace:
      return "'}'";
    case TokenKind::kLParen:
      return "'('";
    case TokenKind::kRParen:
      return "')'";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kColon:
      return "':'";
    case TokenKind::kAssign:
      return "'='";
    case TokenKind::kEq:
      return "'=='";
    case TokenKind::kNe:
      return "'!='";
    case TokenKind::kLt:
      return "'<'";
    case TokenKind::kLe:
      return "'<='";
    case TokenKind::kGt:
      return "'>'";
    case TokenKind::kGe:
      return "'>='";
    case TokenKind::kPlus:
      return "'+'";
    case TokenKind::kMinus:
      return "'-'";
    case TokenKind::kStar:
      return "'*'";
    case TokenKind::kSlash:
      return "'/'";
    case TokenKind::kBang:
      return "'!'";
    case TokenKind::kAndAnd:
      return "'&&'";
    case TokenKind::kOrOr:
      return "'||'";
  }
  return "internal";
}

std::vector<Token> Lex(std::string_view text) { return Lexer(text).Run(); }

std::string Quote(std::string_view text) {
  std::string out = "'";
  const bool cut = text.size() > kMaxQuotedBytes;
  for (char c : text.substr(0, kMaxQuotedBytes)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  if (cut) out += "...";
  out += "'";
  return out;
}

std::string Describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kString: {
      std::string quoted = Quote(token.text);
      const bool has_double = token.text.find('"') != std::string_view::npos;
      if (!has_double) {
        quoted.front() = '"';
        quoted.back() = '"';
      }
      return "string " + quoted;
    }
    default:
      return Quote(token.text);
  }
}

}  // namespace sluice::core::resreq
