// JobArray: one submission of many indexed jobs sharing one spec (R-UX-3). Design in
// docs/design/arrays.md.
//
// Representation: the array keeps its JobSpec once, its indices ascending and one byte of
// state per element (kWaiting: pending and not yet a Job; kHeld: held and not yet a Job;
// kQueued: a Job in the table, whose own state is the element's; kDone, kExit, kCancelled:
// ended). ClusterState turns the first waiting elements into Jobs ("materializes" them)
// only as many as could start soon (RefillArrays), so a pending element that is not a Job
// costs 5 bytes (index + state). Element at position p has enqueue sequence
// base_seq + p: the elements keep their submission's place in the queue, in index order.
// Invariants: indices ascending and unique; states.size() == indices.size(); every
// position before `cursor` is not kWaiting; `pending` lists the positions of the elements
// that are PENDING Jobs.
// Thread-safety: none (owned by ClusterState).
// Implements R-UX-3 (arrays in the core).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/model/job.h"

namespace sluice::core {

inline constexpr int64_t kMaxArrayElements = 10'000'000;

// A parsed array specification: "1-1000:2%50", "1,5,7-9", "0-9%2".
struct ArraySpec {
  std::vector<int32_t> indices;  // ascending, unique
  int32_t cap = 0;               // at most this many elements run at once; 0: no cap
};

// Parses Slurm's `--array` syntax: comma-separated items, each `N` or `A-B` or `A-B:S`
// (step S >= 1), then an optional `%N` (N >= 1). Indices are in [0, kMaxArrayIndex]; at
// most kMaxArrayElements in all. Errors: kInvalidArgument "array: column C: expected ...".
Result<ArraySpec> ParseArraySpec(std::string_view text);

enum class ElementState : uint8_t { kWaiting, kHeld, kQueued, kDone, kExit, kCancelled };
std::string_view ToString(ElementState state);

struct JobArray {
  JobSpec spec;      // the array's submission; spec.id is the array id
  std::string text;  // the specification as submitted, e.g. "1-1000%50"
  std::vector<int32_t> indices;
  std::vector<ElementState> states;  // by position
  int32_t cap = 0;
  uint64_t base_seq = 0;
  QueueIndex queue = 0;
  int32_t min_slots = 1;         // of the shared request (the materialization window)
  size_t cursor = 0;             // no kWaiting position before it
  // Elements by state, kept by ClusterState: waiting/held (not Jobs) and ended ones.
  int64_t waiting = 0;
  int64_t held = 0;
  int64_t done = 0;
  int64_t exited = 0;
  int64_t cancelled = 0;
  // Elements that are Jobs, by their Job's state: pending ones by position (ascending: the
  // cap lets the first ones go), held and admitting/running ones counted.
  std::set<uint32_t> pending;
  int64_t queued_held = 0;
  int64_t active = 0;
  bool started_any = false;
  int64_t flagged_room = -1;  // the cap room the array_limited flags were last set for

  int64_t size() const { return static_cast<int64_t>(indices.size()); }
  int64_t ended() const { return done + exited + cancelled; }
  // The position of `index`, or -1.
  int64_t PositionOf(int32_t index) const;
};

}  // namespace sluice::core
