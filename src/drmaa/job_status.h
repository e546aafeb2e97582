// A Sluice job object (docs/api.md) read the way DRMAA reports jobs: its program state
// (drmaa_job_ps), and once it ended, the `stat` that drmaa_wait returns with its resource
// usage, and the w* functions' reading of that stat.
//
// States (drmaa_job_ps):
//   PENDING, ADMITTING      DRMAA_PS_QUEUED_ACTIVE  (ADMITTING: placed, its agent not yet
//                                                    running it)
//   HELD                    DRMAA_PS_USER_ON_HOLD
//   RUNNING                 DRMAA_PS_RUNNING         (Sluice never suspends a job)
//   DONE                    DRMAA_PS_DONE
//   EXIT, CANCELLED         DRMAA_PS_FAILED
// How a job ended (drmaa_wait's stat):
//   DONE; EXIT with cause NON_ZERO_EXIT       exited, with the exit code (a shell reports a
//                                             child killed by signal N as 128 + N: exited)
//   EXIT with cause RUN_LIMIT or MEM_LIMIT;   signalled: exit_code - 128 when above 128,
//   CANCELLED after it started; HOST_LOST     else SIGKILL (what ends a job Sluice kills)
//     after it started
//   CANCELLED, UNSCHEDULABLE, DISPATCH_FAILED aborted: it never ran
//     or HOST_LOST before it started
// A job cancelled after it started, whose kill its agent has not reported yet, has no exit
// code: KillReported is false, and drmaa_wait waits for the report (within seconds).
// A stat is an int: bits 0-7 the exit code, 8-15 the signal, then one flag bit each for
// exited, signalled, aborted (no core dumps are reported).
// Resource usage: "name=value" strings: submission_time, start_time, end_time (epoch
// seconds), wallclock and cpu (seconds), max_rss_mb, hosts ("h1:2,h2:2"), exit_code; each
// only when known.
// Pure functions. Implements R-COMPAT-4 (drmaa_job_ps, drmaa_wait, w* functions).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sluice::drmaa {

// DRMAA_PS_* of a job object (DRMAA_PS_UNDETERMINED for a state it does not know).
int ProgramStateOf(const nlohmann::json& job);

// Whether the job is in an end state (DONE, EXIT, CANCELLED).
bool HasEnded(const nlohmann::json& job);
// Whether an ended job's end is complete: false while a job cancelled as it ran has no exit
// code yet (its agent is killing it; drmaa_wait waits for the report, up to a bound).
bool KillReported(const nlohmann::json& job);

struct Termination {
  bool exited = false;
  int exit_code = 0;
  bool signalled = false;
  int signal = 0;
  bool aborted = false;
  bool core_dumped = false;
};

// REQUIRES: HasEnded(job).
Termination TerminationOf(const nlohmann::json& job);
std::vector<std::string> ResourceUsageOf(const nlohmann::json& job);

int EncodeStat(const Termination& t);
Termination DecodeStat(int stat);

// "SIGTERM" for 15, ...; "SIG<n>" for a number without a name.
std::string SignalName(int signal);

}  // namespace sluice::drmaa
