// The Slurm and LSF drop-in commands (R-COMPAT-1): `sluice` run under one of their names
// (argv[0], a symlink in build/compat/ or the install's bin/) behaves as that command for the
// forms docs/compat.md lists. Each takes the arguments after its name and returns its exit
// code; they speak to the controller named by SLUICE_SERVER (and SLUICE_TOKEN, or MUNGE).
//
// Exit codes follow the originals: Slurm's commands exit 1 on any error (sbatch, squeue,
// scontrol, sacct, scancel); LSF's bsub, bjobs and bkill exit 255 for a bad option or an
// unknown job, as LSF does, and bsub -K exits with the job's exit code.
// `srun` and `blaunch` start steps inside a job, `srun` outside one and `salloc` interactive
// jobs (launch_compat.cc, R-LAUNCH-3).
// Thread-safety: main-thread only.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::cli::compat {

using Args = std::span<const std::string>;

// The command `program` (argv[0]'s file name) names, run with `args`; nullopt when it is not
// one of the drop-in names.
std::optional<int> RunCompatCommand(std::string_view program, Args args);
bool IsCompatCommand(std::string_view program);
// argv[0]'s file name ("/usr/bin/sbatch" -> "sbatch").
std::string_view ProgramName(const char* argv0);
// RunCompatCommand over main's arguments.
std::optional<int> RunCompatMain(int argc, const char* const* argv);

// LSF's commands exit 255 for what they refuse; LsfUsage prints `PROGRAM: MESSAGE` and
// returns it.
inline constexpr int kLsfFailure = 255;
int LsfUsage(std::string_view program, const std::string& message);
// bkill and brequeue: `action` (the POST's last path word, with `body`) on each job id of
// `ids`, printing `Job <N> <done>` for each; a job the controller refuses is reported as LSF
// does (`No matching job found`, or `refused(code)`'s words when it gives some) and exits 255.
int ActOnLsfJobs(std::string_view program, const std::vector<std::string>& ids,
                 const std::string& action, const std::string& done,
                 std::string (*refused)(StatusCode code),
                 const nlohmann::json& body = nlohmann::json::object());

// Slurm (slurm_submit.cc, slurm_status.cc, slurm_info.cc).
int Sbatch(Args args);
int Squeue(Args args);
int Sacct(Args args);
int Scontrol(Args args);
int Scancel(Args args);
int Sinfo(Args args);
int ScontrolShowConfig();  // `scontrol show config` (slurm_info.cc)
// LSF (lsf_submit.cc, lsf_status.cc, lsf_info.cc).
int Bsub(Args args);
int Bjobs(Args args);
int Bkill(Args args);
int Bhist(Args args);
int Bqueues(Args args);
int Bhosts(Args args);
int Bparams(Args args);
int Lsadmin(Args args);
int Lsid(Args args);
// LSF's changes (lsf_change.cc).
int Bmod(Args args);
int Brequeue(Args args);
int Bpeek(Args args);
// Advance reservations (reservation_compat.cc): brsvadd, brsvs, brsvdel, and scontrol's
// `create reservation`, `update`, `delete` and `show reservation[s]` (`words` from the verb on).
int Brsvadd(Args args);
int Brsvs(Args args);
int Brsvdel(Args args);
int ScontrolReservation(Args words);
// Steps inside a job (launch_compat.cc).
int Srun(Args args);
int Salloc(Args args);
int Blaunch(Args args);

}  // namespace sluice::cli::compat
