// HealthCheck: a host's health program (R-OPS-4; docs/health-checks.md), NHC compatible, as
// plain data. The cluster YAML sets it (config/health_yaml.h), the controller hands it to the
// host's agent (wire/health_report.h), the agent runs it (agent/health_check.h). The core
// itself does not act on it: a failing check reaches the core as a closed host.
// Value type; the loader checks program (an absolute path), 1 <= timeout <= interval.
#pragma once

#include <string>

#include "base/time.h"

namespace sluice::core {

struct HealthCheck {
  std::string program;      // run as root, without arguments
  Duration interval = 300;  // seconds between the starts of two runs (the first at start)
  Duration timeout = 30;    // seconds before a run is killed and counts as failed (NHC's own)

  friend bool operator==(const HealthCheck&, const HealthCheck&) = default;
};

}  // namespace sluice::core
