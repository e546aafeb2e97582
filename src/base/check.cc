#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace sluice::internal {

void CheckFailed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
  std::abort();
}

}  // namespace sluice::internal
