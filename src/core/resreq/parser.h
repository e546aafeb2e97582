// Parse: resource request text (SPEC §3) -> Request, interning select expressions in a pool.
//
// The grammar, every error class and examples are in docs/resreq.md. In short:
//   request     := ""  |  primary  |  alternative ("||" alternative)*
//   alternative := "{" (primary | compound) "}"  |  compound
//   compound    := part ("+" part)*          part := COUNT "*" "{" primary "}"   (COUNT >= 1)
//   primary     := section*   (each of select/order/rusage/span/same at most once, any order)
// select[] expressions: `|| && ! == != < <= > >= + - * /`, parentheses, numbers, strings,
// names, defined(name). `!` applies to a whole comparison (`!a==b` is `!(a==b)`), comparisons
// do not chain, and a bare name where a condition is needed is a tag test (kTag).
//
// Errors: kInvalidArgument with message `column N: found X, expected Y` (N is the 1-based byte
// column of the offending token; N = length + 1 for the end of input). The first error in the
// text wins. When `error` is non-null it also receives the column and the message without the
// `column N: ` prefix, so tests and callers can read the column as a field (Status carries no
// payload). Limits (R-RR-5): kMaxInputBytes of input, kMaxNesting levels of parentheses / `!`
// / unary `-`, kMaxAlternatives, kMaxParts, kMaxRusage, kMaxOrderKeys; exceeding one is an
// error. Parsing is linear in the input, recursion is bounded by kMaxNesting, and memory by a
// constant times the input length.
//
// Checked by the parser (syntax and everything that needs no cluster knowledge): negative and
// duplicate rusage amounts, duplicate sections and order keys, `span[hosts=N]` with N != 1,
// `ptile` < 1, counts < 1. Validate() (validate.h) checks names against the cluster.
//
// Invariants of the result: those of request.h (alternatives and compounds non-empty, rusage
// sorted and unique, limits respected), fingerprints set, every select id interned in `pool`.
// NOTE: a request that fails to parse may still have interned some subexpressions in `pool`;
// they are never referenced, and take at most a constant times the input's size.
// Thread-safety: pure function of its arguments; `pool` is mutated.
// Implements R-RR-1, R-RR-2, R-RR-3, R-RR-4 (via ExprPool) and the syntax part of R-RR-5.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/resreq/expr.h"
#include "core/resreq/request.h"

namespace sluice::core::resreq {

struct ParseError {
  int32_t column = 0;   // 1-based byte column
  std::string message;  // "found ']', expected an expression"
};

// Parses `text`; the request's fingerprints are set. Errors as above.
Result<Request> Parse(std::string_view text, ExprPool& pool, ParseError* error = nullptr);

}  // namespace sluice::core::resreq
