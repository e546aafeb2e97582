#include "server/outcome.h"

namespace sluice::server {

std::string_view ToString(RefusalKind kind) {
  switch (kind) {
    case RefusalKind::kNeverRuns:
      return "never_runs";
    case RefusalKind::kNotModified:
      return "not_modified";
    case RefusalKind::kOverQuota:
      return "over_quota";
    case RefusalKind::kKeyReused:
      return "key_reused";
    case RefusalKind::kKeyInFlight:
      return "key_in_flight";
  }
  return "?";
}

}  // namespace sluice::server
