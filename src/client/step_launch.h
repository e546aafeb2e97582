// Running steps in the current job from a client (R-LAUNCH-1, R-COMPAT-2): what `sluice
// launch`, `blaunch` and `srun` inside a job share. Each task is one step of the job on one
// host of its allocation (POST /v1/jobs/ID/steps, server/step_requests.h); this process then
// relays: our stdin to the first task, every task's stdout and stderr to ours (whole frames,
// never interleaved mid-write), INT, TERM and HUP to every task (a second INT or TERM leaves
// at once, as ssh and srun do), the terminal's size with a pty. It returns when every task
// ended, with the first non-zero status among them (in task order), 128 + signal for a task
// killed by one, 255 when a task could not start (ssh's convention).
// The job is the one SLUICE_JOB_CREDENTIAL names (the job's own credential, which authorises
// only its steps), else SLUICE_JOB_ID with the caller's credentials.
// Thread-safety: RunSteps is called once per process (it blocks signals for its threads).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "client/rest_client.h"

namespace sluice::client {

inline constexpr int kStepLaunchFailed = 255;

struct StepTask {
  std::string host;
  int task = 0;
  // Variables the task's environment gets besides the job's (srun's SLURM_STEP_* and the like;
  // the controller takes SLURM_*, SLUICE_TASK_ID and SLUICE_NODEID only).
  std::map<std::string, std::string> env;
};

struct StepLaunch {
  ClientOptions client;
  int64_t job = 0;
  std::string command;  // run by /bin/sh -c on each host
  std::vector<StepTask> tasks;
  bool pty = false;
  bool kill_on_bad_exit = false;  // a task's non-zero exit kills the others (srun -K)
  std::string program = "sluice launch";  // names this command in messages
};

// The job this process runs in, and its credential ("" without one). kFailedPrecondition
// outside a job.
Result<int64_t> CurrentJob(std::string& credential);
// The client options of a step launch: the flags', with the job's credential when no token is
// given.
Result<ClientOptions> StepClientOptions(const std::string& server, const std::string& token,
                                        const std::string& credential);
// The allocation's hosts and their slots, from SLUICE_HOSTS ("h1:2,h2:2").
std::vector<std::pair<std::string, int>> AllocationHosts();
// `word` quoted for /bin/sh -c, unchanged when it needs no quotes.
std::string ShellQuote(const std::string& word);

int RunSteps(const StepLaunch& launch);
// Relays the streams of the interactive job `launch.job` (its step 0, R-LAUNCH-3) as RunSteps
// relays a step's; `tasks` and `command` are not used. REQUIRES: the job runs (or its step 0
// exists).
int RelayJobStreams(const StepLaunch& launch);

}  // namespace sluice::client
