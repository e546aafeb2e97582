// Where the tests find the source tree and the built `sluice` binary. Only build_paths.cc is
// compiled with these paths (as -D flags): were they on every test source's command line,
// no test object could come from ccache in another clone of the repository.
#pragma once

namespace sluice::testing {

const char* SourceDir();        // the repository's root
const char* SluiceBinary();     // build/sluice
bool SluiceFullUsesMimalloc();  // whether build/sluice-full was linked against mimalloc
const char* DrmaaLibrary();     // build/libsluice-drmaa.so (issue 46)
const char* DrmaaCProgram();    // build/drmaa_all_functions: every DRMAA function, from C

}  // namespace sluice::testing
