#include "testing/build_paths.h"

namespace sluice::testing {

const char* SourceDir() { return SLUICE_SOURCE_DIR; }
const char* SluiceBinary() { return SLUICE_BINARY; }
bool SluiceFullUsesMimalloc() { return SLUICE_FULL_MIMALLOC != 0; }
const char* DrmaaLibrary() { return SLUICE_DRMAA_LIBRARY; }
const char* DrmaaCProgram() { return SLUICE_DRMAA_C_PROGRAM; }

}  // namespace sluice::testing
