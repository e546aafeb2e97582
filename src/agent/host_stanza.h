// The cluster YAML stanza of the host an agent runs on, as `sluice agent --detect` prints it
// (R-GPU-1; docs/gpus.md, "Detection"): what an administrator pastes under `hosts:` instead of
// typing the GPU list by hand. Its `gpus:` list reads back through the cluster YAML loader
// (config/gpu_yaml.h) as the devices the agent registers with.
//
//   hosts:
//     - name: dgx01
//       slots: 128
//       resources: {mem: 1031741}
//       gpus:
//         - {index: 0, model: A100, memory: 40960, numa: 3, nvlink: [1, 2], uuid: GPU-0d1e...}  #
//         NVIDIA A100-SXM4-40GB
//
// Each device is one flow map followed by nvidia-smi's full name as a comment; `path` is
// left out when it is the default /dev/nvidia<index>, a uuid when it is not plain letters,
// digits and dashes. Comments say why a part is missing (no nvidia-smi, a failed detection,
// an unreadable topology).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/gpu_detect.h"

namespace sluice::agent {

// The host's features as the stanza gives them (R-OPS-4): `arch` (uname's machine) as an
// attribute, and the instruction-set extensions jobs select on (`select[avx512f]`) as tags.
struct CpuFeatures {
  std::string arch;               // x86_64, aarch64; empty: unknown (left out)
  std::vector<std::string> tags;  // in kCpuFeatureTags' order
};

struct DetectedHost {
  std::string name;
  int32_t slots = 0;                 // online CPUs; 0: unknown (left out)
  std::string cpus;                  // how they are laid out (DescribeCpus), a comment
  std::optional<int64_t> memory_mb;  // MemTotal; nullopt: unknown (left out)
  CpuFeatures features;
  Result<GpuInventory> gpus = GpuInventory{};
};

std::string HostStanza(const DetectedHost& host);

// The host's memory in MB from `proc`/meminfo (MemTotal), for the stanza's `mem`.
std::optional<int64_t> ReadMemTotalMb(const std::string& proc = "/proc");

// The extensions of the first CPU in `proc`/cpuinfo ("flags" on x86, "Features" on Arm) that
// are in kCpuFeatureTags, and `arch`. The list is short on purpose: what codes are built for
// (vector widths, crypto), not every flag the kernel reports.
inline constexpr const char* kCpuFeatureTags[] = {
    "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "amx_tile",
    "aes", "sha_ni", "asimd", "sve", "sve2", "sha2"};
CpuFeatures ReadCpuFeatures(std::string arch, const std::string& proc = "/proc");

}  // namespace sluice::agent
