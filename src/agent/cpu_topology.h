// The CPUs of the agent's host as the kernel lists them under /sys (issue 41, "CPUs too"):
// each online logical CPU with its socket, its core and its NUMA node, so that a job's slots
// can be bound to whole cores (cpu_binding.h) and those next to its GPUs chosen first.
//
//   /sys/devices/system/cpu/online                          "0-63"
//   /sys/devices/system/cpu/cpuN/topology/physical_package_id   socket
//   /sys/devices/system/cpu/cpuN/topology/core_id               core within the socket
//   /sys/devices/system/node/nodeM/cpulist                  NUMA node M's CPUs
//
// A missing topology file reads as socket 0 / core N (a container's partial /sys); a host
// without /sys/devices/system/node is one node, 0.
// Thread-safety: pure functions (they read files).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::agent {

struct LogicalCpu {
  int32_t cpu = 0;     // the kernel's number (what cpuset.cpus and taskset take)
  int32_t socket = 0;  // physical_package_id
  int32_t core = 0;    // core_id, unique within its socket only
  int32_t numa = 0;

  friend bool operator==(const LogicalCpu&, const LogicalCpu&) = default;
};

// Online CPUs, by number. Errors: kNotFound (no `online` list under `sys`), kInvalidArgument
// (a list that does not parse, naming the file).
Result<std::vector<LogicalCpu>> ReadCpuTopology(const std::string& sys = "/sys");

// ReadCpuTopology's CPUs that this process may run on (sched_getaffinity: a container's
// --cpuset-cpus, a narrowed parent cpuset), which are all a child cpuset can have.
// Errors: ReadCpuTopology's, and kFailedPrecondition when none is left.
Result<std::vector<LogicalCpu>> ReadUsableCpus(const std::string& sys = "/sys");

// A kernel CPU list ("0-3,8,10-11"; empty: none). Errors: kInvalidArgument naming the part
// that is not a number or a range, or a number above 65535.
Result<std::set<int32_t>> ParseCpuList(std::string_view text);
// The shortest such list for `cpus` ("0-3,8").
std::string FormatCpuList(const std::set<int32_t>& cpus);

// The memory nodes this process may allocate on (/proc/self/status Mems_allowed_list); empty
// when it cannot be read.
std::set<int32_t> ReadAllowedMems(const std::string& proc = "/proc");

// "2 sockets x 16 cores x 2 threads (64 CPUs, NUMA nodes 0-1)": what `sluice agent --detect`
// shows of them.
std::string DescribeCpus(const std::vector<LogicalCpu>& cpus);

}  // namespace sluice::agent
