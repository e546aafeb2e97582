// VirtualHost: one host served by a virtual agent (`sluice agent --virtual RANGE`,
// R-SCALE-1): the protocol state of a real agent (agent.h) without processes. A launched job
// "runs" on a timer: SLUICE_VIRTUAL_RUNTIME seconds from its env (else N of a `sleep N`
// command, else 0), then exits with SLUICE_VIRTUAL_EXIT (default 0); its run limit ends it
// early as a real runner would (cause run_limit, SIGTERM). A run-limit order in a reply (an
// administrator's new limit for a running job, R-UX-7) moves that timer as the real agent's
// JobRunner::SetRunLimit does: the limit counts from the job's start; no limit lets it run
// its whole runtime; a limit already passed ends it at the next Tick.
//
// Representation: the jobs it runs with their end times, the exits and launch failures not
// yet acknowledged, and the sequence number current when each job's end was acknowledged.
// Rules it keeps, as the real agent does:
//  - epoch fencing: a reply of an epoch older than the highest seen is ignored whole;
//  - launches are deduplicated: a job that runs, or whose end is not yet acknowledged, is
//    never started again, and after the acknowledgement only a reply to a request sent later
//    may start it again;
//  - self-fencing: no successful exchange sent within the lease ends every job (killed,
//    SIGKILL) and the host reports them once it reaches the controller again.
// Time is a value passed in (no clock reads), so tests drive it.
// Thread-safety: none; the virtual agent gives each host to one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "agent/job_runner.h"
#include "wire/agent_protocol.h"

namespace sluice::agent {

// How a job runs on a virtual host. A runtime that does not parse (negative, not a number)
// is 0; an exit code outside 0..255 is 255.
struct VirtualRun {
  std::chrono::milliseconds runtime{0};
  int exit_code = 0;
};
VirtualRun VirtualRunOf(const wire::Launch& launch);

class VirtualHost {
 public:
  VirtualHost(std::string name, std::string instance)
      : name_(std::move(name)), instance_(std::move(instance)) {}

  const std::string& name() const { return name_; }
  bool registered() const { return registered_; }
  bool fenced() const { return fenced_; }
  uint64_t highest_epoch() const { return highest_epoch_; }
  size_t running() const { return jobs_.size(); }
  bool IsRunning(int64_t job) const { return jobs_.contains(job); }
  int64_t started() const { return started_; }
  int64_t ended() const { return ended_; }

  wire::RegisterRequest Registration(int slots) const;
  // A register reply to a request sent at `sent`. False when it is of an older epoch (ignored).
  bool OnRegistered(const wire::RegisterReply& reply, TimePoint sent);
  // The controller does not know this host (404) or another instance holds it (409).
  void OnRefused() { registered_ = false; }

  // Ends the jobs whose timer is due, and self-fences when the lease has run out.
  void Tick(TimePoint now);
  // The next heartbeat's body (running jobs, unacknowledged reports); `seq` identifies it.
  wire::HeartbeatRequest Heartbeat(uint64_t& seq);
  // A request that only polls for work (nothing to report): its sequence number.
  uint64_t Poll() { return next_seq_++; }
  // A reply to the heartbeat `seq` sent at `sent`. False when stale (older epoch: ignored).
  bool OnReply(const wire::HeartbeatReply& reply, uint64_t seq, TimePoint sent, TimePoint now);
  // Something to tell the controller soon: an end or a launch failure not yet acknowledged, or
  // a start not yet reported.
  bool HasNews() const { return news_ || !exits_.empty() || !failures_.empty(); }
  // The heartbeat went unanswered: what it said is still news.
  void KeepNews() { news_ = true; }
  // The earliest job end or lease deadline (none when idle and never heard).
  std::optional<TimePoint> NextTimer() const;
  // Ends every job now, killed (the agent is stopping).
  void KillAll(TimePoint now);

 private:
  struct Job {
    TimePoint end;
    wire::ExitReport exit;
    TimePoint started;
    VirtualRun run;
    uint64_t launch_run = 0;  // the launch's `run`, echoed in the exit report
  };
  void End(int64_t job, wire::ExitReport report);
  void Launch(const wire::Launch& launch, uint64_t seq, TimePoint now);
  // Sets the job's end and exit for `run_limit` (none: its runtime), counted from its start.
  static void Limit(int64_t id, Job& job, std::optional<std::chrono::milliseconds> run_limit);
  void RecomputeNextEnd();

  std::string name_;
  std::string instance_;
  bool registered_ = false;
  bool fenced_ = false;
  bool news_ = false;
  uint64_t highest_epoch_ = 0;
  std::chrono::seconds lease_{10};
  std::optional<TimePoint> last_ok_send_;
  std::map<int64_t, Job> jobs_;
  std::optional<TimePoint> next_end_;  // the earliest jobs_ end (cache)
  std::map<int64_t, wire::ExitReport> exits_;
  std::map<int64_t, wire::LaunchFailure> failures_;
  std::map<int64_t, uint64_t> acked_at_seq_;
  uint64_t next_seq_ = 1;
  int64_t started_ = 0;
  int64_t ended_ = 0;
};

}  // namespace sluice::agent
