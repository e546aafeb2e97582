// The `health_check` key of the cluster YAML (R-OPS-4; docs/health-checks.md), read into
// core::HealthCheck. It is written at the top level (every host's default, hosts agents add
// included) and in a host entry (that host's own):
//
//   health_check: {program: /usr/sbin/nhc, interval: 5m, timeout: 60s}
//   health_check: none          # in a host entry: this host has none
//
// Checks, each a kInvalidArgument located at the offending key (Reader):
//   - a map with `program` (required), `interval` and `timeout` only, or the word `none`;
//   - `program` is an absolute path without NUL (the agent runs it as root: no search path);
//   - a duration is a whole number of seconds, or one followed by s, m or h (`90`, `90s`,
//     `5m`, `1h`); `interval` within [kMinHealthInterval, kMaxHealthDuration] (default 300 s),
//     `timeout` within [1, interval] (default 30 s, NHC's own; at most the interval).
// Thread-safety: pure functions of their arguments. yaml-cpp may throw; callers run them under
// ParseClusterConfig's try block.
#pragma once

#include <optional>

#include "base/status.h"
#include "base/time.h"
#include "config/yaml_reader.h"
#include "core/model/health_check.h"

namespace sluice::config::yaml {

inline constexpr Duration kMinHealthInterval = 1;
inline constexpr Duration kMaxHealthDuration = 7 * 86400;

// Reads the value at `f`: the check, or nullopt for `none`.
Result<std::optional<core::HealthCheck>> ReadHealthCheck(const Reader& reader, const Field& f);

// A duration as above, in seconds, within [min, max].
Result<Duration> ReadDuration(const Reader& reader, const Field& f, Duration min, Duration max);

}  // namespace sluice::config::yaml
