// Job array element ids (R-UX-3).
//
// An array is one submission with one JobId; its element INDEX is the job `ID[INDEX]`. Inside
// Sluice an element is addressed by one JobId that packs both: the array id in the low 32
// bits and INDEX + 1 in the high bits, so a plain job's id (below 2^32) is never an
// element's, ids of one array's elements grow with their index, and an element id orders
// after every plain id (the final tie-break by id stays deterministic).
// Representation limits: array ids in [1, kMaxArrayJobId], indices in [0, kMaxArrayIndex].
// Pure value functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "base/ids.h"

namespace sluice {

inline constexpr JobId kMaxArrayJobId = (JobId{1} << 32) - 1;
inline constexpr int32_t kMaxArrayIndex = (int32_t{1} << 30) - 1;

// REQUIRES: 1 <= array <= kMaxArrayJobId and 0 <= index <= kMaxArrayIndex.
constexpr JobId ArrayElementId(JobId array, int32_t index) {
  return array | ((static_cast<JobId>(index) + 1) << 32);
}
constexpr bool IsArrayElement(JobId id) { return id > kMaxArrayJobId; }
// The array an element belongs to; a plain id is returned as is.
constexpr JobId ArrayIdOf(JobId id) { return id & kMaxArrayJobId; }
// The element's index. REQUIRES: IsArrayElement(id).
constexpr int32_t ArrayIndexOf(JobId id) { return static_cast<int32_t>((id >> 32) - 1); }

// "12" for a plain job, "12[3]" for element 3 of array 12.
inline std::string FormatJobId(JobId id) {
  if (!IsArrayElement(id)) return std::to_string(id);
  return std::to_string(ArrayIdOf(id)) + "[" + std::to_string(ArrayIndexOf(id)) + "]";
}

}  // namespace sluice
