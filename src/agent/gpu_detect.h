// GPU detection on an agent's host (R-GPU-1; docs/gpus.md, "Detection"): the host's NVIDIA
// GPUs as nvidia-smi lists them, made into the core::GpuDevice values the agent registers
// with (wire::GpuReport) and `sluice agent --detect` prints.
//
// Two runs of nvidia-smi, each parsed by a pure function tested on recorded outputs:
//   - `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits`:
//     one line per GPU, `0, GPU-8f6e2b1c-..., NVIDIA A100-SXM4-40GB, 40960` (memory in MiB);
//     `[N/A]` is an unknown value (ParseGpuQuery);
//   - `nvidia-smi topo -m`: a tab-separated matrix whose rows and first columns are the GPUs
//     (then NICs such as mlx5_0 or NIC0, whose rows are skipped), followed by the columns
//     `CPU Affinity`, `NUMA Affinity` and, on newer drivers, `GPU NUMA ID`. A cell `NV#` (# bonded
//     NVLinks) links the row's GPU to the column's; `NUMA Affinity` is the GPU's NUMA node (N/A:
//     unknown). Text after `Legend:` and ANSI colour codes are ignored (ParseGpuTopology).
// A topology that cannot be read is not fatal: the devices are then known without NUMA nodes
// and NVLink, and GpuInventory::topology_error says why.
//
// Models: GpuDevice has a single `model`, which `gmodel=` matches, so it holds a short form
// of nvidia-smi's name (ShortGpuModel: "NVIDIA A100-SXM4-40GB" -> "A100"); the full names
// are kept beside the devices in GpuInventory::names (printed by `--detect`, logged by the
// agent), not sent.
//
// Thread-safety: pure functions, except DetectGpus, which runs processes (command_output.h)
// and may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "wire/agent_protocol.h"

namespace sluice::agent {

// One line of the query.
struct QueriedGpu {
  int32_t index = 0;
  std::string uuid;       // "": [N/A]
  std::string name;       // as nvidia-smi says it: "NVIDIA A100-SXM4-40GB"
  int64_t memory_mb = 0;  // MiB; 0: [N/A]
};

// Errors (kInvalidArgument, naming the line): a line without four comma-separated fields, an
// index that is not a whole number 0-63 or is listed twice, an empty name, a memory that is not
// a whole number of MiB, more than kMaxGpusPerHost lines. Empty lines are skipped; no line
// at all is no GPU.
Result<std::vector<QueriedGpu>> ParseGpuQuery(std::string_view output);

// What `topo -m` says of one GPU.
struct GpuLinks {
  int32_t numa = -1;            // -1: N/A, or no NUMA Affinity column (older drivers)
  std::vector<int32_t> nvlink;  // GPUs it has NVLink to (as its row says), ascending
  bool operator==(const GpuLinks&) const = default;
};

// By GPU index. Errors (kInvalidArgument, naming the line): no header line with GPU0, a GPU
// row with fewer cells than the header has matrix columns, a NUMA Affinity that is neither a
// whole number nor N/A, a GPU listed twice.
Result<std::map<int32_t, GpuLinks>> ParseGpuTopology(std::string_view output);

// The name `gmodel=` matches: the first word of `name` that holds a digit, up to its first
// `-`; when that word starts with a digit, the word before it goes in front. Only letters,
// digits and `._+` are kept. "NVIDIA A100-SXM4-40GB" -> "A100", "NVIDIA H100 80GB HBM3" ->
// "H100", "Tesla V100-SXM2-16GB" -> "V100", "NVIDIA L40S" -> "L40S", "NVIDIA RTX A6000" ->
// "A6000", "NVIDIA GeForce RTX 4090" -> "RTX4090". A name without a digit: its words after
// "NVIDIA", joined ("TITAN V" -> "TITANV").
std::string ShortGpuModel(std::string_view name);

// The devices of a query with what the topology says of them: sorted by index, the short
// model, path /dev/nvidia<index>, NVLink peers limited to the listed devices and made
// symmetric (one side's cell is enough). A GPU the topology does not list has no NUMA node
// and no links.
std::vector<core::GpuDevice> GpuDevicesOf(const std::vector<QueriedGpu>& gpus,
                                          const std::map<int32_t, GpuLinks>& topology);

struct DetectOptions {
  std::string search_path;  // where nvidia-smi is looked for, as $PATH (the caller's $PATH)
  std::chrono::milliseconds timeout{10'000};  // for each run of nvidia-smi
};

// What DetectGpus found.
struct GpuInventory {
  bool nvidia_smi = false;               // false: none on the search path (and no devices)
  std::vector<core::GpuDevice> devices;  // sorted by index
  std::vector<std::string> names;        // nvidia-smi's name of each device, in that order
  std::string topology_error;            // "": `topo -m` was read
};

// Steps: 1. find nvidia-smi on the search path (none: an inventory without it, not an
// error); 2. run the query (exit status 6, "No devices were found", is zero GPUs) and parse
// it; 3. run `topo -m` and parse it, keeping the devices without topology if that fails;
// 4. GpuDevicesOf.
// Errors: kUnavailable (nvidia-smi could not run, failed, or did not answer in time and was
// killed; the message has the first line it printed), kInvalidArgument (its query output
// could not be read), kResourceExhausted (it printed more than a megabyte).
Result<GpuInventory> DetectGpus(const DetectOptions& options);

// The report the agent registers with: kNvidiaSmi with the devices, kNoNvidiaSmi, or kFailed
// with the error's message.
wire::GpuReport GpuReportOf(const Result<GpuInventory>& detected);

}  // namespace sluice::agent
