// Evaluation of select[] expressions and order[] keys against one host (R-RR-1).
//
// Purpose: the allocator implements HostView for each host it considers and asks whether the
// host passes a primary's select and where it sorts by order[]. ReadsFreeAmounts tells it
// which expressions depend only on static host data, so their result can be cached per
// (expression, host), e.g. as a bitset per ExprId.
//
// Semantics (user-facing version in docs/resreq.md):
//  - A name resolves, in this order, to: the host's FREE amount of a consumable of that name
//    (`mem`, `slots`, `gpu`, ...: HostView::Free); for `max<res>`, the configured TOTAL of
//    <res> (`maxmem`, `maxslots`: HostView::Total); the host attribute of that name (`type`,
//    `arch`, ...). An attribute whose whole text is a finite number (`"8"`, `"2.5"`) also has
//    that numeric value.
//  - Comparisons: numerically when both sides are numbers, else as byte strings (a number is
//    then written in its shortest form). A bare word that resolves to nothing is the word
//    itself as a string, but only when the other side is a resolved host value (LSF style
//    `type==linux`); otherwise it is an undefined name. A bare word compared with a host's
//    non-numeric text attribute is always the word itself, even when the word also names a
//    resource or attribute of the host (`type==gpu` on a host that has a `gpu` resource). A
//    comparison with an undefined side is false, whatever the operator (so `!(gpu>0)` holds on a
//    host without gpu, `gpu<=0` not).
//  - Arithmetic takes numbers; a string or undefined operand, a division by zero or a result
//    that is not finite makes the whole value undefined (its comparison is false); nothing
//    traps.
//  - A bare name as a condition (kTag) is true when the host has that tag; else, when the name
//    resolves to a number, when that number is non-zero (`select[gpu]`: a free gpu); else
//    false.
//  - defined(name) is true when the name resolves (as above) or is a tag of the host.
//  - `&&` and `||` short-circuit left to right; kNoExpr is true.
// Invariants: evaluation never fails and never allocates on the heap; its recursion depth is
// bounded by the expression's nesting (parser: kMaxNesting), since flat chains are iterated.
// Thread-safety: pure functions; HostView implementations decide their own.
// Implements R-RR-1 (select semantics, order keys) and supports R-AL-3 (per-host caching).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/resreq/expr.h"
#include "core/resreq/request.h"

namespace sluice::core::resreq {

// One host as an expression sees it. All methods are pure queries and must be cheap.
class HostView {
 public:
  virtual ~HostView() = default;
  // The attribute's text, or nullopt when the host has no such attribute.
  virtual std::optional<std::string_view> Attribute(std::string_view name) const = 0;
  virtual bool HasTag(std::string_view name) const = 0;
  // The free amount of a consumable resource (including "slots"), or nullopt when the host
  // has no resource of that name.
  virtual std::optional<double> Free(std::string_view name) const = 0;
  // The configured total of a consumable resource (including "slots"), or nullopt.
  virtual std::optional<double> Total(std::string_view name) const = 0;
};

// Whether `host` passes the expression. REQUIRES: id is kNoExpr or an id of `pool`.
bool EvalSelect(ExprId id, const ExprPool& pool, const HostView& host);
// The same, and sets `read_free` (never clears it) when the verdict depended on a free
// amount of the host (HostView::Free's value, not merely whether the host defines the
// resource). When it stays false the verdict depends only on the host's configuration and
// may be memoized per (expression, host): `type==gpu` on a host whose `type` is text reads
// the word `gpu`, not the free gpus, although ReadsFreeAmounts (below) says it may.
bool EvalSelect(ExprId id, const ExprPool& pool, const HostView& host, bool& read_free);

// The host's value for an order key: the name resolved as in select (free amount, max total,
// or numeric attribute), or nullopt when it resolves to nothing numeric. The sign is NOT
// applied: the allocator sorts ascending by this value, or descending when key.descending,
// and puts hosts without a value last, then breaks ties by its stable host order.
std::optional<double> EvalOrderKey(const OrderKey& key, const HostView& host);

// The distinct names an expression reads (identifiers, tags, defined()), sorted.
std::vector<std::string_view> ReferencedNames(ExprId id, const ExprPool& pool);

// True when the expression may read a free amount: it names "slots" or a name for which
// `is_consumable(name)` holds. An expression for which this is false depends only on
// attributes, tags and totals, so its result per host changes only when the host's
// configuration does. `IsConsumable` is callable as bool(std::string_view).
template <typename IsConsumable>
bool ReadsFreeAmounts(ExprId id, const ExprPool& pool, const IsConsumable& is_consumable) {
  for (std::string_view name : ReferencedNames(id, pool)) {
    if (name == "slots" || is_consumable(name)) return true;
  }
  return false;
}

}  // namespace sluice::core::resreq
