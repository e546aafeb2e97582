// Steps on the wire (R-LAUNCH-1..3): the orders that start and stop a step on an agent, and
// the frames that carry a step's streams through the controller.
//
// A step's streams go through the controller on the ordinary HTTP(S) connections of both
// ends, authenticated there; nothing opens a port per job. Each direction is a sequence of
// frames the controller buffers and numbers; a reader long-polls for the frames after the last
// one it saw (`after`) and gets a page:
//   page:  {"frames": [FRAME...], "next": 17, "end": false}     (GET .../output, .../input)
//   post:  {"frames": [FRAME...]}                                (POST .../output, .../input)
//   FRAME: {"t": "out", "d": BASE64}   stdout bytes       {"t": "err", "d": BASE64} stderr
//          {"t": "in", "d": BASE64}    stdin bytes        {"t": "eof"}  stdin closed
//          {"t": "sig", "n": 2}        a signal for the step's processes (1..64)
//          {"t": "winsz", "rows": 24, "cols": 80}  the terminal's size (--pty)
//          {"t": "exit", "status": 7, "signal": null, "cpu_seconds": 0.1, "max_rss_mb": 3,
//           "error": ""}             the step ended (status as a shell shows it, 128 + signal)
//                                    or could not start (`error`, status 255)
// Bytes travel as base64 (a terminal's output is not UTF-8 text, JSON strings are).
// Orders ride in the agent's heartbeat reply (wire/agent_protocol.h):
//   "steps":     [{"job": 12, "step": 3, "command": "orted ...", "env": {...}, "account": "u",
//                  "cwd": "/home/u", "pty": false, "rows": 0, "cols": 0, "umask": 18,
//                  "mem_limit_mb": 100, "cpu_limit": 2}]
//   "step_kill": [{"job": 12, "step": 3}]   step 0: every step of the job on that host
// Decoding never throws; errors are kInvalidArgument naming the element and field.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "wire/gpu_indexes.h"

namespace sluice::wire {

inline constexpr size_t kMaxFrameBytes = 1 << 20;      // decoded bytes of one data frame
inline constexpr size_t kMaxFramesPerMessage = 4096;

enum class FrameKind { kStdout, kStderr, kStdin, kStdinEof, kSignal, kResize, kExit };

struct StepExit {
  int status = 0;                // as a shell shows it: the exit code, or 128 + signal
  std::optional<int> signal;     // the signal that killed the step's leader
  std::optional<double> cpu_seconds;
  std::optional<double> max_rss_mb;
  std::string error;             // the step could not start: why (status 255)
  friend bool operator==(const StepExit&, const StepExit&) = default;
};

struct StepFrame {
  FrameKind kind = FrameKind::kStdout;
  std::string data;  // kStdout, kStderr, kStdin
  int signal = 0;    // kSignal
  int rows = 0;      // kResize
  int cols = 0;
  StepExit exit;     // kExit
  friend bool operator==(const StepFrame&, const StepFrame&) = default;

  static StepFrame Data(FrameKind kind, std::string bytes) {
    return StepFrame{.kind = kind, .data = std::move(bytes)};
  }
};

// A page of frames for a long-polling reader.
struct StepPage {
  std::vector<StepFrame> frames;
  int64_t next = 0;  // ask for the frames after this one next time
  bool end = false;  // no frame will follow
};

nlohmann::json EncodeFrame(const StepFrame& frame);
nlohmann::json EncodeFrames(const std::vector<StepFrame>& frames);
Result<StepFrame> DecodeFrame(const nlohmann::json& frame);
// `body` is {"frames": [...]} (other fields ignored). At most kMaxFramesPerMessage.
Result<std::vector<StepFrame>> DecodeFrames(const nlohmann::json& body);
nlohmann::json EncodePage(const StepPage& page);
Result<StepPage> DecodePage(const nlohmann::json& body);

struct StepOrder {
  int64_t job = 0;
  int64_t step = 0;
  std::string command;  // run by /bin/sh -c, as ssh runs its words
  std::map<std::string, std::string> env;
  std::string account;
  std::string cwd;
  bool pty = false;
  int rows = 0;  // the terminal's size with `pty` (0: not known)
  int cols = 0;
  std::optional<int> umask;
  // The job's limits on this host, for a host where the job's first process does not run
  // (its steps get a cgroup of their own there).
  std::optional<int64_t> mem_limit_mb;
  std::optional<int> cpu_limit;
  GpuBinding gpus;  // the job's GPUs on this host (R-GPU-3): steps get the same set
};

struct StepKill {
  int64_t job = 0;
  int64_t step = 0;  // 0: every step of the job on this host
};

nlohmann::json EncodeStepOrder(const StepOrder& order);
Result<StepOrder> DecodeStepOrder(const nlohmann::json& order);
nlohmann::json EncodeStepKill(const StepKill& kill);
Result<StepKill> DecodeStepKill(const nlohmann::json& kill);

// "12.3" -> {12, 3}; the id form of a step (`jobs -l`, history).
std::string StepId(int64_t job, int64_t step);

}  // namespace sluice::wire
