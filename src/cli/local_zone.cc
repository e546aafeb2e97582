#include "cli/local_zone.h"

#include <cstdlib>
#include <filesystem>

namespace sluice::cli {

std::string LocalZoneName() {
  if (const char* tz = std::getenv("TZ"); tz != nullptr && *tz != '\0') {
    return tz[0] == ':' ? tz + 1 : tz;
  }
  std::error_code error;
  const std::string target = std::filesystem::read_symlink("/etc/localtime", error).string();
  const size_t at = target.find("zoneinfo/");
  return error || at == std::string::npos ? "" : target.substr(at + 9);
}

}  // namespace sluice::cli
