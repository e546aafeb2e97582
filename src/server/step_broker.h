// StepBroker: the streams of the steps running in jobs (R-LAUNCH-1..3), buffered in the
// controller between the two ends that long-poll it — `sluice launch`/`run` on one side, the
// agent that runs the step on the other — and the orders that start and stop steps on agents.
//
// Each step has two frame sequences (wire/step_stream.h): output (stdout, stderr, then one
// exit frame), written by the agent and read by the client, and input (stdin, EOF, signals,
// terminal sizes), written by the client and read by the agent. Frames are numbered from 1 per
// sequence; a reader asks for the frames after the last one it saw, which acknowledges and
// drops what it saw (one reader per sequence). Output is bounded (`max_output_bytes`): a
// write into a full buffer is refused and the agent retries, so a client that does not read
// holds back its step (the step blocks on its pipe) and never the controller's memory.
// A step whose client has not polled for `client_grace` (a `sluice launch` killed with
// SIGKILL, a laptop gone) is killed: its host gets a kill order. Ended steps are forgotten
// once the client has read the exit, or `client_grace` after the end.
//
// Representation: steps by (job, step) in an ordered map; orders and kills waiting per host.
// Thread-safety: every method locks the broker's own mutex (rank kStepStreams, a leaf: the
// controller's lock may be held when it is taken, never the other way round); the reads wait
// on a condition variable without holding anything else.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "wire/step_stream.h"

namespace sluice::server {

struct StepBrokerOptions {
  std::chrono::milliseconds client_grace{30'000};
  size_t max_output_bytes = 8 << 20;  // per step, buffered and not yet read
  size_t max_input_bytes = 1 << 20;
  size_t max_steps = 100'000;  // live steps in the whole controller
};

// A step's ending as the broker saw it (for the job's record).
struct StepEnd {
  int64_t job = 0;
  int64_t step = 0;
  wire::StepExit exit;
  bool killed = false;  // ended by a kill order (the job ended, its client vanished)
};

class StepBroker {
 public:
  explicit StepBroker(StepBrokerOptions options = {}) : options_(options) {}

  // Registers a step that `order` starts on `host` (its `step` number given by the caller),
  // with the client seen at `now_ms`. kResourceExhausted beyond max_steps; kAlreadyExists for
  // a step number in use.
  Status Open(const wire::StepOrder& order, const std::string& host, int64_t now_ms);

  // Step 0 of an interactive job (R-LAUNCH-3): its main process's streams on `host`, started by
  // the job's launch rather than an order. A step 0 left from an earlier run is replaced.
  void OpenAttached(int64_t job, const std::string& host, int64_t now_ms);

  // The agent side of the heartbeat: orders and kills for `host` (taken).
  bool HasOrders(const std::string& host);
  std::vector<wire::StepOrder> TakeOrders(const std::string& host);
  std::vector<wire::StepKill> TakeKills(const std::string& host);
  // Hosts and steps of the job's live steps; each host gets a kill order for all of the job's
  // steps. Returns the hosts to wake.
  std::set<std::string> KillJob(int64_t job);
  // Kills the steps whose client has not polled for client_grace, forgets ended steps past
  // it. Returns the hosts to wake.
  std::set<std::string> Expire(int64_t now_ms);

  // The agent of `host` registered again (it restarted, or lost its controller and fenced): its
  // steps are gone. Each live one ends with status 255 and `why`, so its client returns.
  void FailHost(const std::string& host, const std::string& why);

  // Client side. Output frames after `after`, waiting up to `wait` for one; kNotFound for an
  // unknown (or forgotten) step.
  Result<wire::StepPage> ReadOutput(int64_t job, int64_t step, int64_t after,
                                    std::chrono::milliseconds wait, int64_t now_ms);
  // kResourceExhausted when the input buffer is full (the client retries), kFailedPrecondition
  // once the step ended.
  Status WriteInput(int64_t job, int64_t step, std::vector<wire::StepFrame> frames);

  // Agent side: only the step's host may read and write its streams (kPermissionDenied).
  Result<wire::StepPage> ReadInput(const std::string& host, int64_t job, int64_t step,
                                   int64_t after, std::chrono::milliseconds wait);
  // false: the output buffer is full, nothing was taken (the agent retries). The step's exit
  // frame ends it: `ended` is then set.
  Result<bool> WriteOutput(const std::string& host, int64_t job, int64_t step,
                           std::vector<wire::StepFrame> frames, std::optional<StepEnd>& ended);

  // Wakes every waiting reader (the controller stops).
  void WakeAll();
  size_t size();

 private:
  struct Sequence {
    std::deque<wire::StepFrame> frames;
    int64_t first = 1;  // number of frames.front()
    size_t bytes = 0;
    int64_t Next() const { return first + static_cast<int64_t>(frames.size()); }
  };
  struct Step {
    std::string host;
    Sequence output;
    Sequence input;
    bool ended = false;       // the exit frame arrived
    bool exit_read = false;   // the client has read it
    bool killed = false;      // a kill order went out
    int client_polls = 0;     // client reads in progress
    int64_t client_seen_ms = 0;
    int64_t ended_ms = 0;
  };
  using Key = std::pair<int64_t, int64_t>;

  Result<Step*> Find(const Key& key) SLUICE_REQUIRES(mu_);
  // Drops frames up to `after` and returns those after it (at most `max_bytes` of data).
  static wire::StepPage PageAfter(Sequence& seq, int64_t after, bool end);
  void QueueKill(const std::string& host, wire::StepKill kill) SLUICE_REQUIRES(mu_);

  const StepBrokerOptions options_;
  Mutex mu_{LockRank::kStepStreams};
  std::condition_variable_any changed_;
  std::map<Key, Step> steps_ SLUICE_GUARDED_BY(mu_);
  std::map<std::string, std::vector<wire::StepOrder>> orders_ SLUICE_GUARDED_BY(mu_);
  std::map<std::string, std::vector<wire::StepKill>> kills_ SLUICE_GUARDED_BY(mu_);
  bool stopping_ SLUICE_GUARDED_BY(mu_) = false;
};

}  // namespace sluice::server
