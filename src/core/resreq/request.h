// Request: the compiled form of a resource request string (SPEC §3), and its canonical text.
//
// Representation (grammar and semantics: docs/resreq.md):
//  - A Request is a list of alternatives (`{...} || {...}`, R-RR-3), tried in order; each is a
//    Compound: parts that must all be allocated together (`2*{...} + 4*{...}`, R-RR-2); each
//    part is a Primary (`select[] order[] rusage[] span[] same[] gpu[]`, R-RR-1, R-GPU-2).
//  - A plain request (`select[a] rusage[mem=10]`) is one alternative with one part whose count
//    is 0, meaning "the job's task count" (`-n`). Parts of a written compound have count >= 1.
//  - The empty request (no constraints) is one alternative with one default Primary.
//  - Primary::select is an id in the caller's ExprPool (kNoExpr: no select). Two primaries
//    parsed into the same pool have equal `select` exactly when their expressions are
//    structurally identical, so operator== compares requests of one pool.
//  - rusage is sorted by resource name, without duplicates; order keys keep the written order
//    (the first key is the primary sort key), without duplicate names.
//  - Fingerprints (R-RR-4) are computed once at parse time by UpdateFingerprints(). The
//    primary's covers count, select, order, rusage, span and same; the request's covers every
//    alternative and part in order. They use the select expression's structural hash (not its
//    id), so they are equal across pools, processes and platforms. NOTE: the brief proposed
//    hashing the select id; ids depend on the pool's history, structural hashes do not. The
//    job's task range (`-n min,max`), user, queue and exclusive flag are not part of the
//    request: the unsatisfiable-request cache (R-AL-5) adds them to its key. A fingerprint is
//    a 64-bit hash: a consumer that must never confuse two requests compares with operator==
//    after a fingerprint match.
// Invariants: alternatives is never empty; no compound is empty; at most kMaxAlternatives
// alternatives, kMaxParts parts per compound, kMaxRusage rusage entries and kMaxOrderKeys
// order keys (the parser enforces them with an error; Validate re-checks the semantic ones).
// Thread-safety: value types.
// Implements R-RR-1, R-RR-2, R-RR-3 (data), R-RR-4 (fingerprints, canonical text).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/resreq/expr.h"

namespace sluice::core::resreq {

inline constexpr size_t kMaxInputBytes = 64 * 1024;
inline constexpr int kMaxNesting = 64;  // parentheses, `!` and unary `-` inside select[]
inline constexpr size_t kMaxAlternatives = 64;
inline constexpr size_t kMaxParts = 64;
inline constexpr size_t kMaxRusage = 64;
inline constexpr size_t kMaxOrderKeys = 64;

struct OrderKey {
  std::string name;
  bool descending = false;  // written `-name`; `name` and `+name` sort ascending

  friend bool operator==(const OrderKey&, const OrderKey&) = default;
};

struct Rusage {
  std::string resource;
  double amount = 0;  // >= 0: per task for host resources, per job for shared resources

  friend bool operator==(const Rusage&, const Rusage&) = default;
};

enum class SpanKind : uint8_t {
  kNone,     // tasks may spread over any number of hosts
  kOneHost,  // span[hosts=1]: all tasks on one host
  kPtile,    // span[ptile=K]: exactly K tasks per host, the last host takes the remainder
};
inline constexpr SpanKind kAllSpanKinds[] = {SpanKind::kNone, SpanKind::kOneHost, SpanKind::kPtile};
// "none", "hosts=1", "ptile".
std::string_view ToString(SpanKind kind);

struct Span {
  SpanKind kind = SpanKind::kNone;
  int32_t ptile = 0;  // kPtile only: K >= 1

  friend bool operator==(const Span&, const Span&) = default;
};

// gpu[...] (R-GPU-2): GPUs taken by device index on each host of the allocation.
enum class GpuPer : uint8_t {
  kHost,  // num=N or num=N/host: N devices on every host the part uses
  kTask,  // num=N/task: N devices per task placed on the host
};

struct GpuRequest {
  int32_t num = 0;             // devices per host or per task; 0: no gpu[] section
  GpuPer per = GpuPer::kHost;  //
  bool shared = false;         // mode=shared (and not j_exclusive=yes): others may share them
  int64_t mem_mb = 0;          // gmem: device memory each must have (shared: reserves it)
  std::string model;           // gmodel: the devices' model; empty: any
  bool link = false;           // glink=yes: a host's devices pairwise NVLink-connected
  bool affinity = false;       // aff=yes: a host's devices (per task: a task's) on one NUMA node

  friend bool operator==(const GpuRequest&, const GpuRequest&) = default;
};
inline constexpr int32_t kMaxGpuNum = 64;

struct Primary {
  int32_t count = 0;  // N of `N*{...}`; 0: the job's task count
  ExprId select = kNoExpr;
  std::vector<OrderKey> order;
  std::vector<Rusage> rusage;  // sorted by resource, unique
  Span span;
  std::string same;  // attribute name; empty: no same[]
  GpuRequest gpu;
  uint64_t fingerprint = 0;

  // True when the primary has no section (select, order, rusage, span, same or gpu).
  bool Unconstrained() const;
  friend bool operator==(const Primary&, const Primary&) = default;
};

struct Compound {
  std::vector<Primary> parts;

  friend bool operator==(const Compound&, const Compound&) = default;
};

struct Request {
  std::vector<Compound> alternatives;
  uint64_t fingerprint = 0;

  friend bool operator==(const Request&, const Request&) = default;
};

// The request with no constraints (what the empty string parses to), fingerprints set.
Request UnconstrainedRequest();

// Fingerprint of one primary from its fields (ignores its `fingerprint` member).
uint64_t PrimaryFingerprint(const Primary& primary, const ExprPool& pool);
// Fingerprint of a request from its parts' `fingerprint` members and its shape.
uint64_t RequestFingerprint(const Request& request);
// Sets every primary's fingerprint and then the request's. Parse() calls it; code that builds
// or edits a Request by hand calls it afterwards.
void UpdateFingerprints(Request& request, const ExprPool& pool);

// The canonical text of a request: sections in the order select, order, rusage, span, same,
// gpu (keys in the order num, mode, gmodel, gmem, glink, aff; defaults left out);
// rusage sorted and `:`-separated; order keys `,`-separated with `-` for descending only;
// `&&` and `||` spaced, other operators not (`select[type==linux && mem>4000]`); parentheses
// only where the structure needs them, plus around a negated comparison (`!(a==b)`); numbers
// in shortest round-trip decimal form. A plain request prints without braces, alternatives as
// `{...} || {...}`; the empty request prints as "". Parse(Normalize(r)) equals r (same
// fingerprint; operator== in the same pool).
// NOTE: the text can be up to 5/3 of the original's length (`a&&!b<c` becomes
// `a && !(b<c)`), so a request written within kMaxInputBytes * 3/5 always reparses.
std::string Normalize(const Request& request, const ExprPool& pool);
// The canonical text of one select expression (without `select[` `]`); "" for kNoExpr.
std::string NormalizeExpr(ExprId id, const ExprPool& pool);

}  // namespace sluice::core::resreq
