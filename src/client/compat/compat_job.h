// One job as the Slurm and LSF commands show it (R-COMPAT-1): what a job object of
// GET /v1/jobs and a row of GET /v1/history (an ended job the controller no longer keeps)
// both say, and the words each dialect uses for its state.
//
// States (Sluice -> Slurm / LSF):
//   PENDING                 PENDING (PD)          PEND
//   HELD                    PENDING (PD)          PSUSP     Slurm reason JobHeldUser
//   ADMITTING, RUNNING      RUNNING (R)           RUN       (Slurm and LSF run a job from its
//                                                            allocation on)
//   DONE                    COMPLETED (CD)        DONE
//   EXIT NON_ZERO_EXIT      FAILED (F)            EXIT
//   EXIT RUN_LIMIT          TIMEOUT (TO)          EXIT      TERM_RUNLIMIT
//   EXIT MEM_LIMIT          OUT_OF_MEMORY (OOM)   EXIT      TERM_MEMLIMIT
//   EXIT HOST_LOST          NODE_FAIL (NF)        EXIT      TERM_LOAD (host lost)
//   EXIT DISPATCH_FAILED,   FAILED (F)            EXIT
//        UNSCHEDULABLE
//   CANCELLED               CANCELLED (CA)        EXIT      TERM_OWNER
// An array's own object (its elements by state) takes its elements' overall state as the
// API gives it. Sluice never suspends a running job, so USUSP never occurs.
// Thread-safety: pure functions.
// Implements R-COMPAT-1's states.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wire/history_json.h"

namespace sluice::client::compat {

struct CompatJob {
  int64_t id = 0;
  std::optional<int64_t> index;  // an array element's index
  std::string array;             // an array's own object: its specification ("1-50%5")
  std::string name;
  std::string user;
  std::string account;  // the UNIX account it runs as
  std::string queue;
  std::string state;   // Sluice's: PENDING, HELD, ADMITTING, RUNNING, DONE, EXIT, CANCELLED
  std::string cause;   // EXIT's cause; "" none
  std::string reason;  // the main pending reason code; "" none
  std::string reason_text;  // its words (the API's `reasons.headline`); "" unknown
  std::string project;
  std::string depend;
  std::string resreq;
  std::string command;
  std::string cwd;
  std::string output;  // as submitted (%j not yet replaced)
  std::string error;   // "" : with the output
  bool script = false;  // a job script (R-UX-1) rather than a command
  int64_t submit_time = 0;
  int64_t start_time = 0;  // 0: not started
  int64_t end_time = 0;    // 0: not ended
  int64_t begin = 0;       // 0: none
  std::optional<int64_t> run_limit;
  std::optional<int32_t> exit_code;
  int32_t tasks = 1;
  int64_t priority = 0;
  bool exclusive = false;
  std::vector<std::pair<std::string, int32_t>> hosts;  // where it runs or ran, slots each
  std::optional<double> cpu_seconds;
  std::optional<double> max_rss_mb;
  std::string message;
  bool from_history = false;  // only what a history row says is known
  // Filled by the command from the system's account database (not the API).
  int64_t uid = -1;
  int64_t gid = -1;
  std::string group;

  bool Ended() const { return state == "DONE" || state == "EXIT" || state == "CANCELLED"; }
  bool Started() const { return start_time > 0; }
  // The id as the dialect writes it: `12`, an element `12_3` (Slurm) or `12[3]` (LSF).
  std::string SlurmId() const;
  std::string LsfId() const;
  // `name` with the file patterns of both dialects replaced: %j %J %A (job id), %a %I
  // (index), %x (name), %u (user), %% (%).
  std::string Expand(std::string_view pattern) const;
  int32_t Slots() const;  // allocated slots, else the tasks asked
};

// A job object of GET /v1/jobs; members it lacks keep their defaults.
CompatJob JobFromObject(const nlohmann::json& job);
// A history row (wire/history_json.h).
CompatJob JobFromHistory(const wire::HistoryEntry& row);

enum class SlurmState {
  kPending,
  kRunning,
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kOutOfMemory,
  kNodeFail
};
inline constexpr SlurmState kAllSlurmStates[] = {
    SlurmState::kPending,   SlurmState::kRunning, SlurmState::kCompleted,
    SlurmState::kFailed,    SlurmState::kCancelled, SlurmState::kTimeout,
    SlurmState::kOutOfMemory, SlurmState::kNodeFail};
std::string_view ToString(SlurmState state);  // "PENDING", "OUT_OF_MEMORY", ...
std::string_view ShortCode(SlurmState state);  // "PD", "OOM", ...
SlurmState SlurmStateOf(const CompatJob& job);
// scontrol's Reason= and squeue's %r: "None", "Priority", "Resources", "JobHeldUser", ...
std::string SlurmReason(const CompatJob& job);
// scontrol's and sacct's ExitCode: "STATUS:SIGNAL" (a job killed by a signal: "0:SIGNAL").
std::string SlurmExitCode(const CompatJob& job);

enum class LsfStat { kPend, kPsusp, kRun, kDone, kExit };
inline constexpr LsfStat kAllLsfStats[] = {LsfStat::kPend, LsfStat::kPsusp, LsfStat::kRun,
                                           LsfStat::kDone, LsfStat::kExit};
std::string_view ToString(LsfStat stat);  // "PEND", "PSUSP", ...
LsfStat LsfStatOf(const CompatJob& job);
// bjobs' EXIT_REASON of an ended job ("TERM_MEMLIMIT: job killed after reaching LSF memory
// usage limit", ...); "" for a job that ended by itself.
std::string LsfExitReason(const CompatJob& job);
// bjobs' PEND_REASON of a waiting job ("New job is waiting for scheduling", ...); "" else.
std::string LsfPendReason(const CompatJob& job);

}  // namespace sluice::client::compat
