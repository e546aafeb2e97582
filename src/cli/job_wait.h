// `sluice submit --wait`: waits for a job to end and returns its exit code (client/wait_exit.h).
// Polls GET /v1/jobs/ID, every 100 ms at first and then at most every second; a controller
// that does not answer is retried for up to 60 s (a failover) before the wait gives up with
// exit code 1. Ctrl-C (SIGINT) while waiting cancels the job (R-UX-5) and returns 130.
// Progress lines go to stderr so that stdout keeps only what `submit` printed.
// Thread-safety: installs a SIGINT handler for its duration; call from the CLI's thread.
#pragma once

#include <cstdint>

#include "client/rest_client.h"

namespace sluice::cli {

int WaitForJob(client::RestClient& rest, int64_t id);

}  // namespace sluice::cli
