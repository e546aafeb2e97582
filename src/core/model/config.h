// ClusterConfig: the operator's description of a cluster (SPEC §2), as plain data.
//
// Drivers fill it from the cluster YAML (src/config) or from flags (`sluice sim --hosts`);
// the core turns it into a ClusterState. Keys the current issues do not act on yet (capacity,
// limits, windows, ...) are still carried so a valid config never loses information.
// Implements the data side of SPEC §2. Value type; no invariants beyond what the loader checks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "core/model/predictive_config.h"

namespace sluice::core {

enum class HostState { kOk, kClosed, kUnavail, kDraining };
std::string_view ToString(HostState state);
std::optional<HostState> ParseHostState(std::string_view text);

enum class PolicyKind : uint8_t { kFifo, kBoundedBackfill, kEasyBackfill, kPredictiveBackfill };
std::string_view ToString(PolicyKind policy);
std::optional<PolicyKind> ParsePolicyKind(std::string_view text);

enum class OnHostLoss { kRequeue, kExit };
std::string_view ToString(OnHostLoss action);
std::optional<OnHostLoss> ParseOnHostLoss(std::string_view text);

// One GPU of a host (R-GPU-1): what a job's `gpu[]` request can ask for and what the agent
// binds to it. Only `index` is required; the rest is declared in the YAML or detected.
struct GpuDevice {
  int32_t index = 0;            // the device's number on its host, 0..kMaxGpusPerHost-1
  std::string model;            // e.g. "A100"; empty: unknown (matches no gmodel=)
  int64_t memory_mb = 0;        // device memory; 0: unknown (matches no gmem=)
  std::string uuid;             // empty: unknown
  std::string path;             // device node; empty: /dev/nvidia<index>
  int32_t numa = -1;            // NUMA node the device hangs off; -1: unknown
  std::vector<int32_t> nvlink;  // indexes of the devices it has NVLink to, sorted

  friend bool operator==(const GpuDevice&, const GpuDevice&) = default;
};
// Device sets are 64-bit masks (bit i: the device of index i).
inline constexpr int32_t kMaxGpusPerHost = 64;

struct HostSpec {
  std::string name;
  int32_t slots = 1;
  std::map<std::string, int64_t> resources;       // consumables, e.g. mem (MB), gpu
  std::map<std::string, std::string> attributes;  // type, model, arch, key=value
  std::vector<std::string> tags;
  HostState state = HostState::kOk;
  // Its GPUs, sorted by index; resources["gpu"] is their number. Empty with a `gpu` count:
  // that many devices 0..N-1 known by index only.
  std::vector<GpuDevice> gpus;
  bool gpus_auto = false;  // `gpus: auto`: the agent detects them with nvidia-smi
};

struct QueueSpec {
  std::string name;
  int32_t priority = 0;
  PolicyKind policy = PolicyKind::kFifo;
  int32_t max_bypass = 50;         // bounded_backfill: bypasses before the head's gate closes
  Duration max_head_wait = 3600;   // bounded_backfill: seconds before the head's gate closes
  PredictiveKnobs predictive;      // predictive_backfill (predictive_config.h)
  std::optional<double> capacity;  // guaranteed % of cluster slots
  double max_capacity = 100;
  double user_limit_pct = 0;
  Duration reclaim_after = 300;
  std::optional<int32_t> run_limit;   // max running jobs
  std::optional<int64_t> slot_limit;  // max slots in use
  std::string host_group;             // empty: every host
  std::vector<std::string> windows;   // "19:00-07:00"
  OnHostLoss on_host_loss = OnHostLoss::kRequeue;
  std::optional<std::vector<std::string>> submit_users;
  std::string default_resreq;
  bool open = true;    // accepts submissions
  bool active = true;  // dispatches
  // Fairshare within the queue (R-Q-4): shares per user ("default" for users not listed);
  // empty: no fairshare, plain queue order.
  std::map<std::string, double> fairshare;
  Duration fairshare_half_life = 86400;  // seconds for past usage to count half
  // What a GPU-second costs in fairshare usage, in slot-seconds (R-GPU-4): a job is charged
  // (slots + weight x GPUs) per second it runs.
  double fairshare_gpu_weight = 1;
  // Priority preemption (R-CAP-4): a preemptive queue's jobs may preempt jobs of preemptable
  // queues of lower priority.
  bool preemptive = false;
  bool preemptable = false;
  Duration preempt_grace = 30;  // seconds between SIGTERM and SIGKILL for a victim
};

// A limit's scope along one dimension (users, queues, hosts, projects): unset means no
// restriction; `names` empty with `per_each` means "every one separately" (per_user: all).
struct LimitScope {
  bool set = false;
  bool per_each = false;
  std::vector<std::string> names;  // empty: all
};

struct LimitSpec {
  std::string name;
  LimitScope users;
  LimitScope queues;
  LimitScope hosts;
  LimitScope projects;
  std::optional<int64_t> slots;
  std::optional<int64_t> jobs;
  std::map<std::string, int64_t> resources;
};

struct ClusterConfig {
  std::vector<HostSpec> hosts;  // names already expanded (h[001-004] -> h001 ... h004)
  std::map<std::string, std::vector<std::string>> host_groups;
  std::map<std::string, int64_t> shared_resources;
  std::vector<QueueSpec> queues;
  std::vector<LimitSpec> limits;
  std::string default_queue;  // empty: the first queue listed
  // Wall-clock time (Unix seconds, UTC) at core time 0: dispatch windows are wall-clock
  // rules. The server passes Unix time as `now` (offset 0); the simulator maps its time 0 to
  // the SWF `UnixStartTime` header, else to 1970-01-01T00:00Z.
  Instant epoch_offset = 0;
};

// The simulator's default: `hosts` hosts of `slots` slots named h1..hN (zero-padded to the
// width of N), one fifo queue named "normal".
ClusterConfig UniformCluster(int32_t hosts, int32_t slots);

}  // namespace sluice::core
