#include "agent/cgroup_device_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace sluice::agent {
namespace {

bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn insn{};
  insn.code = code;
  insn.dst_reg = dst & 0xf;
  insn.src_reg = src & 0xf;
  insn.off = off;
  insn.imm = imm;
  return insn;
}

// rDst = *(u32 *)(r1 + off): a field of struct bpf_cgroup_dev_ctx.
bpf_insn LoadField(uint8_t dst, int16_t off) {
  return Insn(BPF_LDX | BPF_MEM | BPF_W, dst, BPF_REG_1, off, 0);
}
bpf_insn JumpIfNot(uint8_t reg, int32_t value, int16_t skip) {
  return Insn(BPF_JMP | BPF_JNE | BPF_K, reg, 0, skip, value);
}
bpf_insn Return(int32_t value) { return Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, value); }
bpf_insn Exit() { return Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

long Bpf(int command, bpf_attr& attr) { return syscall(__NR_bpf, command, &attr, sizeof attr); }

Status Failed(const std::string& what, const std::string& dir, int error) {
  return Status(StatusCode::kUnavailable,
                "device fence for " + dir + ": " + what + ": " + std::strerror(error));
}

}  // namespace

std::vector<bpf_insn> DeviceFenceProgram(const std::vector<DeviceRule>& deny) {
  std::vector<bpf_insn> program;
  // r2 = device type (the low 16 bits of access_type), r3 = major, r4 = minor.
  program.push_back(LoadField(BPF_REG_2, offsetof(bpf_cgroup_dev_ctx, access_type)));
  program.push_back(Insn(BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xFFFF));
  program.push_back(LoadField(BPF_REG_3, offsetof(bpf_cgroup_dev_ctx, major)));
  program.push_back(LoadField(BPF_REG_4, offsetof(bpf_cgroup_dev_ctx, minor)));
  for (const DeviceRule& rule : deny) {
    const int32_t type = rule.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
    // Each mismatch skips the rest of this rule's five instructions.
    program.push_back(JumpIfNot(BPF_REG_2, type, 4));
    program.push_back(JumpIfNot(BPF_REG_3, static_cast<int32_t>(rule.major), 3));
    program.push_back(JumpIfNot(BPF_REG_4, static_cast<int32_t>(rule.minor), 2));
    program.push_back(Return(0));
    program.push_back(Exit());
  }
  program.push_back(Return(1));
  program.push_back(Exit());
  return program;
}

Status AttachDeviceFence(const std::string& dir, const std::vector<DeviceRule>& deny) {
  if (deny.size() > kMaxFenceRules) {
    return InvalidArgument("device fence for " + dir + ": more than " +
                           std::to_string(kMaxFenceRules) + " devices");
  }
  const std::vector<bpf_insn> program = DeviceFenceProgram(deny);
  static const char kLicense[] = "Apache-2.0";
  bpf_attr load{};
  load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  load.insns = reinterpret_cast<uint64_t>(program.data());
  load.insn_cnt = static_cast<uint32_t>(program.size());
  load.license = reinterpret_cast<uint64_t>(kLicense);
  const long prog = Bpf(BPF_PROG_LOAD, load);
  if (prog < 0) return Failed("load", dir, errno);
  const int cgroup = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgroup < 0) {
    const int error = errno;
    close(static_cast<int>(prog));
    return Failed("open", dir, error);
  }
  bpf_attr attach{};
  attach.target_fd = static_cast<uint32_t>(cgroup);
  attach.attach_bpf_fd = static_cast<uint32_t>(prog);
  attach.attach_type = BPF_CGROUP_DEVICE;
  attach.attach_flags = BPF_F_ALLOW_MULTI;
  const long attached = Bpf(BPF_PROG_ATTACH, attach);
  const int error = errno;
  close(cgroup);
  close(static_cast<int>(prog));  // the attachment holds its own reference
  if (attached < 0) return Failed("attach", dir, error);
  return Status::Ok();
}

}  // namespace sluice::agent
