// A stand-in for nvidia-smi, for the tests of GPU detection (agent/gpu_detect.h): a shell
// script named nvidia-smi in a test's directory, which the test puts first on the search path
// DetectGpus is given (DetectOptions::search_path: the directory, then the real $PATH). It
// prints recorded outputs: the query's for `--query-gpu=...`, the topology's for `topo -m`.
// Thread-safety: plain functions over the test's own directory.
#pragma once

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace sluice::testing {

// Writes `dir`/nvidia-smi running `body` under /bin/sh ($1 is its first argument).
inline void WriteFakeNvidiaSmiScript(const std::filesystem::path& dir, const std::string& body) {
  const std::filesystem::path script = dir / "nvidia-smi";
  std::ofstream(script) << "#!/bin/sh\n" << body << "\n";
  chmod(script.c_str(), 0755);
}

// Writes `dir`/nvidia-smi answering the query with `query` and `topo -m` with `topo`, both
// exiting with `status`. The outputs are files beside it, so tabs and escapes stay as given.
inline void WriteFakeNvidiaSmi(const std::filesystem::path& dir, const std::string& query,
                               const std::string& topo, int status = 0) {
  std::ofstream(dir / "query.out") << query;
  std::ofstream(dir / "topo.out") << topo;
  const std::string d = dir.string();
  WriteFakeNvidiaSmiScript(dir, "if [ \"$1\" = topo ]; then cat '" + d + "/topo.out'; else cat '" +
                                    d + "/query.out'; fi\nexit " + std::to_string(status));
}

// The search path with `dir` first, as a test puts its fake there.
inline std::string PathWithFirst(const std::filesystem::path& dir) {
  const char* path = std::getenv("PATH");
  return dir.string() + ":" + (path != nullptr ? path : "/usr/bin:/bin");
}

// Two A100s joined by NVLink on NUMA node 0, as nvidia-smi prints them (tabs in the matrix).
inline constexpr const char* kTwoA100Query =
    "0, GPU-3c0e7a52-91d4-4b7e-a0f6-1d2c8e5b7a01, NVIDIA A100-SXM4-40GB, 40960\n"
    "1, GPU-b81f4d06-2e7a-4c93-8d15-6a0b3f9e2c44, NVIDIA A100-SXM4-40GB, 40960\n";
inline constexpr const char* kTwoA100Topo =
    "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV12\t0-31\t0\t\tN/A\n"
    "GPU1\tNV12\t X \t0-31\t0\t\tN/A\n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

}  // namespace sluice::testing
