#include "agent/process_image.h"

#include <sys/prctl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace sluice::agent {
namespace {

// Written once by RememberArgvArea before any thread starts, then only read: a process-wide
// fact about the exec'd image, not state.
char* g_area_begin = nullptr;
char* g_area_end = nullptr;

}  // namespace

void RememberArgvArea(int argc, char** argv) {
  if (argc <= 0 || argv == nullptr || argv[0] == nullptr) return;
  char* end = argv[0];
  for (int i = 0; i < argc; ++i) {
    if (argv[i] == nullptr || argv[i] < end) break;  // not one contiguous block: keep what is
    end = argv[i] + std::strlen(argv[i]) + 1;
  }
  g_area_begin = argv[0];
  g_area_end = end;
}

void ConcealInArgv(std::string_view value) {
  if (value.empty() || g_area_begin == nullptr) return;
  for (char* at = g_area_begin; at + value.size() <= g_area_end; ++at) {
    if (std::memcmp(at, value.data(), value.size()) == 0) {
      std::memset(at, 'x', value.size());
      at += value.size() - 1;
    }
  }
}

std::string TakeFromEnvironment(const char* name) {
  const char* found = std::getenv(name);
  if (found == nullptr) return "";
  std::string value = found;
  // getenv points into the entry itself: overwrite it where it lives (for a variable of the
  // initial environment, the block /proc/PID/environ shows), then drop it.
  std::memset(const_cast<char*>(found), 'x', value.size());
  unsetenv(name);
  return value;
}

void SetProcessTitle(const char* title) {
  if (g_area_begin != nullptr) {
    const size_t room = static_cast<size_t>(g_area_end - g_area_begin);
    const size_t length = std::min(std::strlen(title), room - 1);
    std::memcpy(g_area_begin, title, length);
    std::memset(g_area_begin + length, 0, room - length);
  }
  prctl(PR_SET_NAME, title, 0, 0, 0);
}

}  // namespace sluice::agent
