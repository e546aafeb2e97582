// Job arrays in the CLI (R-UX-3): job references `ID`, `ID[I]` and `ID[A-B]` as the user
// types them, the JOBID column's text of an element (`12[3]`) or an array (`12[1-50%5]`),
// and `sluice jobs -A` (one line per array, its elements counted by state, as `bjobs -A`).
// Pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::client {

// `12`, `12[3]` or `12[2-7]` (also Slurm's `12_3`).
struct JobRef {
  int64_t id = 0;
  std::string index;  // "" (the job, or every element of an array), "3" or "2-7"

  // The API path of the job, then `suffix` ("/cancel"), then `?index=...` when set.
  std::string Path(std::string_view suffix = "") const;
  std::string Text() const {
    return index.empty() ? std::to_string(id) : std::to_string(id) + "[" + index + "]";
  }
};
// Errors: kInvalidArgument "job id 'x': expected ID, ID[INDEX] or ID[FIRST-LAST]".
Result<JobRef> ParseJobRef(std::string_view text);

// A job object's JOBID text: `12`, an element `12[3]`, an array `12[1-50%5]`.
std::string JobIdText(const nlohmann::json& job);

// `jobs -A`: the array objects of `jobs` (those with `array`), one row each:
// JOBID NAME USER QUEUE NJOBS PEND HELD RUN DONE EXIT CANCEL.
std::string FormatArrays(const nlohmann::json& jobs);

}  // namespace sluice::client
