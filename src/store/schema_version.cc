#include "store/schema_version.h"

namespace sluice::store {

Status NewerSchemaError(const std::string& where, int found) {
  return FailedPrecondition(where + " has schema version " + std::to_string(found) +
                            ", newer than this sluice's " + std::to_string(kSchemaVersion) +
                            ": it was written by a newer release; run that release (an older " +
                            "binary must not change it)");
}

}  // namespace sluice::store
