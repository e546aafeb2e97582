// The steps both step tests use (tests/wire/step_record_test.cc, steps_json_test.cc): one of
// each state, with a command that needs quoting and a CPU time near zero.
#pragma once

#include <vector>

#include "wire/step_record.h"

namespace sluice::wire::fixtures {

inline std::vector<StepRecord> ThreeSteps() {
  return {{.step = 1,
           .host = "h1",
           .command = "hostname",
           .start_time = 1733380000,
           .end_time = 1733380005,
           .exit_code = 0,
           .cpu_seconds = 0.01,
           .max_rss_mb = 3.2,
           .state = "COMPLETED"},
          {.step = 2,
           .host = "h2",
           .command = "sleep 100 \"a,b\"\n",
           .start_time = 1733380006,
           .end_time = 1733380009,
           .exit_code = 137,
           .signal = 9,
           .cpu_seconds = 1e-7,
           .state = "CANCELLED"},
          {.step = 3, .host = "h1", .command = "./run", .start_time = 1733380010,
           .state = "RUNNING"}};
}

}  // namespace sluice::wire::fixtures
