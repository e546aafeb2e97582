// `sluice modify ID [flags]` (bmod, scontrol update; R-UX-7): the flags and the PATCH
// /v1/jobs/{id} body they make (docs/api.md).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"

namespace sluice::client {

// Unset flags leave the job's value as it is.
struct ModifyFlags {
  std::optional<std::string> queue;
  std::optional<std::string> tasks;      // "N" or "N,M"
  std::optional<std::string> resreq;     // "" removes (the queue's default)
  std::optional<std::string> run_limit;  // as submit -W; "none" removes
  std::optional<std::string> begin;      // as submit -b; "none" removes
  std::optional<std::string> depend;     // "" removes
  std::optional<int64_t> priority;
  std::optional<std::string> name;
};

// The body; kInvalidArgument naming the flag for a value that does not parse, or when no
// flag is set.
Result<nlohmann::json> BuildModifyBody(const ModifyFlags& flags, int64_t now);

}  // namespace sluice::client
