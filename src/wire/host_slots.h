// SLUICE_HOSTS, a job's allocation as its processes see it (server/job_variables.h writes it):
// "h1:2,h2:2", host names in allocation order with their slots. The agent writes the job's
// hostfile from it, and `sluice launch --all` / srun lay their tasks over it.
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::wire {

// The hosts and their slots (at least 1 each: a missing or unreadable count is 1); empty
// entries are skipped.
std::vector<std::pair<std::string, int>> ParseHostSlots(std::string_view text);

}  // namespace sluice::wire
