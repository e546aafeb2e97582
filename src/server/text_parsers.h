// The server's one parser of integers and lists in text — query parameters, ids in a route's
// path, header values, the `--listen` port — so that every place refuses a bad value the same
// way: 400 (kInvalidArgument) naming the key, the range expected and the value given.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::server {

// `text` as a whole decimal integer (an optional '-' and digits, nothing else), or nullopt.
std::optional<int64_t> ParseInteger(std::string_view text);

// `value` as a decimal integer in [min, max]; otherwise kInvalidArgument
// "KEY: expected an integer in [MIN, MAX], got 'VALUE'" (the value cut at 40 bytes).
Result<int64_t> QueryInteger(const std::string& key, const std::string& value, int64_t min,
                             int64_t max);

// The items of a comma-separated list, in order, empty items dropped ("a,,b," -> a, b).
std::vector<std::string> SplitList(std::string_view text);

// A `state=` filter (issue 47.7): Sluice's state names in any case, LSF's (PEND, RUN, PSUSP)
// and Slurm's (PD, R, CD, F, CA, and their long forms) read as Sluice's, in Sluice's names.
// Errors: kInvalidArgument "state: no job state 'X'; expected PENDING, HELD, RUNNING, ...".
Result<std::vector<std::string>> ParseJobStates(std::string_view list);

}  // namespace sluice::server
