// Byte limits on every stored field of a submission (issue 19: "byte limits on every stored
// field"), checked after ParseSubmission normalized the spec and before anything is taken in,
// so that no user can fill the store, the agents' launch messages or the listings with one
// job. A field beyond its limit is a 400 naming the field and the limit, e.g.
// `jobs[2].output: 600013 bytes exceed the limit of 4096 bytes`.
//
// Limits (bytes unless said otherwise): command 65536 in all and 4096 arguments; name 1024;
// queue, project 256; resreq 4096; depend 16384; cwd, output, error 4096 (PATH_MAX); env 4096
// variables and 262144 bytes of names and values; script 1 MiB (wire::kMaxScriptBytes,
// checked by ParseSubmission).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace sluice::server {

struct FieldLimits {
  static constexpr size_t kCommandBytes = 64 * 1024;
  static constexpr size_t kCommandArgs = 4096;
  static constexpr size_t kNameBytes = 1024;
  static constexpr size_t kQueueBytes = 256;
  static constexpr size_t kProjectBytes = 256;
  static constexpr size_t kResreqBytes = 4096;
  static constexpr size_t kDependBytes = 16 * 1024;
  static constexpr size_t kPathBytes = 4096;
  static constexpr size_t kEnvVariables = 4096;
  static constexpr size_t kEnvBytes = 256 * 1024;
};

// REQUIRES: `spec` is normalized (ParseSubmission). Errors: kInvalidArgument naming
// `where.field` and its limit.
Status CheckFieldLimits(const nlohmann::json& spec, const std::string& where);

}  // namespace sluice::server
