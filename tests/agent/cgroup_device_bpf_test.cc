// The cgroup v2 device fence (R-GPU-3): the eBPF program run by a small interpreter of the
// instructions it uses (every rule refuses its device, nothing else is refused), and on this
// kernel: a process in a cgroup of the unified tree with the fence attached opens the allowed
// stand-in device nodes and gets EPERM on the denied ones. Skips without root or a unified
// tree (hybrid hosts mount it at /sys/fs/cgroup/unified, v2 hosts at /sys/fs/cgroup).
#include "agent/cgroup_device_bpf.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

namespace fs = std::filesystem;

// Runs `program` on a device access the way the kernel would: r1 points at the context.
// Knows only the instructions DeviceFenceProgram emits; anything else fails the test.
int Interpret(const std::vector<bpf_insn>& program, char type, uint32_t major, uint32_t minor) {
  const uint32_t ctx[3] = {
      (uint32_t{BPF_DEVCG_ACC_READ} << 16) |
          (type == 'b' ? uint32_t{BPF_DEVCG_DEV_BLOCK} : uint32_t{BPF_DEVCG_DEV_CHAR}),
      major, minor};
  uint64_t reg[11] = {};
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const bpf_insn& in = program[pc];
    switch (in.code) {
      case BPF_LDX | BPF_MEM | BPF_W:
        EXPECT_EQ(in.src_reg, BPF_REG_1);
        reg[in.dst_reg] = ctx[in.off / 4];
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        reg[in.dst_reg] = static_cast<uint32_t>(reg[in.dst_reg] & static_cast<uint32_t>(in.imm));
        break;
      case BPF_JMP | BPF_JNE | BPF_K:
        if (reg[in.dst_reg] != static_cast<uint64_t>(static_cast<int64_t>(in.imm))) pc += in.off;
        break;
      case BPF_ALU64 | BPF_MOV | BPF_K:
        reg[in.dst_reg] = static_cast<uint64_t>(static_cast<int64_t>(in.imm));
        break;
      case BPF_JMP | BPF_EXIT:
        return static_cast<int>(reg[0]);
      default:
        ADD_FAILURE() << "unexpected opcode " << int{in.code} << " at " << pc;
        return -1;
    }
  }
  ADD_FAILURE() << "the program runs off its end";
  return -1;
}

TEST(DeviceFenceProgramTest, RefusesExactlyTheListedDevices) {
  const std::vector<DeviceRule> deny = {{'c', 195, 2}, {'c', 195, 3}, {'b', 8, 0}};
  const std::vector<bpf_insn> program = DeviceFenceProgram(deny);
  EXPECT_EQ(Interpret(program, 'c', 195, 2), 0);
  EXPECT_EQ(Interpret(program, 'c', 195, 3), 0);
  EXPECT_EQ(Interpret(program, 'b', 8, 0), 0);
  EXPECT_EQ(Interpret(program, 'c', 195, 0), 1);    // the job's own GPU
  EXPECT_EQ(Interpret(program, 'c', 195, 255), 1);  // nvidiactl
  EXPECT_EQ(Interpret(program, 'c', 1, 3), 1);      // /dev/null
  EXPECT_EQ(Interpret(program, 'b', 195, 2), 1);    // same numbers, other type
  EXPECT_EQ(Interpret(program, 'c', 8, 0), 1);
  EXPECT_EQ(Interpret(DeviceFenceProgram({}), 'c', 195, 2), 1);
}

// The unified tree's mount point, or empty.
std::string UnifiedRoot() {
  for (const char* root : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    if (fs::exists(std::string(root) + "/cgroup.procs") &&
        !fs::exists(std::string(root) + "/tasks")) {
      return root;
    }
  }
  return "";
}

TEST(DeviceFenceKernelTest, ADeniedNodeFailsWithEpermAndAnAllowedOneOpens) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (bpf, mknod, cgroups)";
  const std::string root = UnifiedRoot();
  if (root.empty()) GTEST_SKIP() << "no cgroup v2 tree mounted";
  sluice::testing::TempDir dir;
  const std::string allowed = (dir.path() / "gpu0").string();  // a copy of /dev/zero
  const std::string denied = (dir.path() / "gpu1").string();   // a copy of /dev/full
  if (mknod(allowed.c_str(), S_IFCHR | 0666, makedev(1, 5)) != 0 ||
      mknod(denied.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    GTEST_SKIP() << "mknod refused in " << dir.path();
  }
  const std::string cgroup = root + "/sluice-fence-test-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(cgroup.c_str(), 0755), 0) << cgroup << ": " << std::strerror(errno);
  struct RemoveCgroup {
    std::string path;
    ~RemoveCgroup() { rmdir(path.c_str()); }
  } cleanup{cgroup};
  Status attached = AttachDeviceFence(cgroup, {{'c', 1, 7}});
  ASSERT_TRUE(attached.ok()) << attached.message();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Joins the fenced cgroup, then reports: bit 0 the allowed node opened, bit 1 the denied
    // one failed with EPERM.
    std::ofstream(cgroup + "/cgroup.procs") << getpid() << std::flush;
    int result = 0;
    const int ok = open(allowed.c_str(), O_RDONLY);
    if (ok >= 0) result |= 1;
    const int refused = open(denied.c_str(), O_RDONLY);
    if (refused < 0 && errno == EPERM) result |= 2;
    _exit(result);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << "1: allowed node opened, 2: denied node refused";
}

}  // namespace
}  // namespace sluice::agent
