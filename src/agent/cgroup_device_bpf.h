// The cgroup v2 device fence (R-GPU-3): under the unified tree a cgroup refuses device nodes
// through an eBPF program of type BPF_PROG_TYPE_CGROUP_DEVICE attached to it (v2 has no
// devices.deny). The program is a short list of comparisons built here and loaded with the
// bpf() system call, so the agent needs neither libbpf nor a compiler for BPF.
//
// Program: for each rule, when the device's type, major and minor all match, return 0
// (refused: the open or mknod fails with EPERM); after the last rule, return 1 (allowed).
// Access kinds (read, write, mknod) are all refused for a matching device.
// Thread-safety: pure apart from the system calls of AttachDeviceFence.
#pragma once

#include <linux/bpf.h>

#include <string>
#include <vector>

#include "agent/cgroup.h"
#include "base/status.h"

namespace sluice::agent {

// The program for `deny`, at most kMaxFenceRules rules (a host's GPUs).
std::vector<bpf_insn> DeviceFenceProgram(const std::vector<DeviceRule>& deny);
inline constexpr size_t kMaxFenceRules = 256;

// Loads DeviceFenceProgram(deny) and attaches it to the cgroup directory `dir` (with
// BPF_F_ALLOW_MULTI, beside programs systemd may have attached above it). The attachment
// keeps the program alive; it goes with the cgroup. Errors: kUnavailable naming the step
// and errno (no BPF support, not root, not a cgroup v2 directory).
Status AttachDeviceFence(const std::string& dir, const std::vector<DeviceRule>& deny);

}  // namespace sluice::agent
