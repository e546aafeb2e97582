// Loads the cluster YAML of SPEC §2 into a core::ClusterConfig (a driver: uses yaml-cpp).
//
// Every error names the file, line and field, e.g.
// `cluster.yaml:12: queues[2].max_capacity: 140 > 100`. Unknown keys are errors (a typo must
// not silently drop a setting). Host name ranges `h[001-064]` are expanded here.
// Checks (SPEC §2): capacity, max_capacity and user_limit_pct within 0–100; max_capacity >=
// capacity; guaranteed capacities sum to at most 100 (+1e-9); limits name only defined
// resources; queue_defaults supplies omitted queue keys; default_queue names a queue.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "core/model/config.h"

namespace sluice::config {

// Parses YAML text; `filename` is used in error messages only.
Result<core::ClusterConfig> ParseClusterConfig(std::string_view text, std::string_view filename);

// Reads and parses a file.
Result<core::ClusterConfig> LoadClusterConfig(const std::string& path);

// Expands `h[001-064]` (zero-padded to the width of the bounds), `h[1-3]`, and plain names.
Result<std::vector<std::string>> ExpandHostRange(std::string_view pattern);

}  // namespace sluice::config
