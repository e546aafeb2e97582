// How the drop-in commands reach the controller and find jobs (R-COMPAT-1): a client from
// SLUICE_SERVER / SLUICE_TOKEN, a job by id whether it is still in the controller's memory
// or only in history (ended jobs stay visible to every status command), and the live jobs.
// Thread-safety: main-thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/compat/compat_job.h"
#include "client/rest_client.h"

namespace sluice::cli::compat {

// A client for the controller of SLUICE_SERVER. Errors: kInvalidArgument when it is unset.
Result<std::unique_ptr<client::RestClient>> Connect();

// "12", "12_3" (Slurm) or "12[3]" (LSF) -> the API's id. Errors: kInvalidArgument.
Result<int64_t> ParseJobId(const std::string& text);

// The job, from GET /v1/jobs/ID, else from history (the user's rows, newest first, a bounded
// number of pages). Errors: kNotFound when neither knows it; others as RestClient's.
Result<client::compat::CompatJob> FindJob(client::RestClient& rest, int64_t id);

// The live jobs (GET /v1/jobs with `query`, e.g. "user=alice&state=RUNNING"), each to `each`
// as the streamed listing arrives (issue 45), so a status command prints as it reads.
// Errors: the request's (some jobs may have gone to `each` before a broken connection).
Status ForEachLiveJob(client::RestClient& rest, const std::string& query,
                      const std::function<void(client::compat::CompatJob)>& each);
// The same, kept in a vector (for output that needs every job first, e.g. bjobs -json's count).
Result<std::vector<client::compat::CompatJob>> LiveJobs(client::RestClient& rest,
                                                        const std::string& query);

// Ended jobs of history with end time >= since (GET /v1/history, every page up to a bound).
Result<std::vector<client::compat::CompatJob>> HistoryJobs(client::RestClient& rest,
                                                           const std::string& query);

// The user the commands act for: $USER, else the process's account name.
std::string CurrentUser();
// Seconds since the epoch.
int64_t Now();

}  // namespace sluice::cli::compat
