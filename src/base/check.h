// SLUICE_CHECK: the channel for bugs. A failed check prints where and aborts, in every build
// (Mesos CHECK). SLUICE_DCHECK is for checks too costly for release builds.
#pragma once

namespace sluice::internal {
[[noreturn]] void CheckFailed(const char* expr, const char* file, int line);
}  // namespace sluice::internal

#define SLUICE_CHECK(cond)                                        \
  do {                                                            \
    if (!(cond)) [[unlikely]] {                                   \
      ::sluice::internal::CheckFailed(#cond, __FILE__, __LINE__); \
    }                                                             \
  } while (false)

#ifdef NDEBUG
#define SLUICE_DCHECK(cond) \
  do {                      \
  } while (false && (cond))
#else
#define SLUICE_DCHECK(cond) SLUICE_CHECK(cond)
#endif
