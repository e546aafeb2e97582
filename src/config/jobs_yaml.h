// The `jobs:` section of the cluster YAML (issue 47), read into config::JobPolicy
// (cluster_yaml.h):
//
//   jobs:
//     env_deny: [<glob>, ...]     # never travel with a job (default SLUICE_TOKEN,
//                                 #   SLUICE_*_TOKEN, MUNGE_*); an empty list denies nothing
//     env_allow: [<glob>, ...]    # when set, only these travel
//     default_output: <pattern>   # -o when a job names none (default sluice-%j.out; "" discards)
//     default_array_output: <pattern>   # the same for array elements (default sluice-%A_%a.out)
//
// Checks: only these keys; a glob is a non-empty name of letters, digits, `_` and `*`; an output
// pattern is a relative or absolute path without NUL. The core never sees this section (the
// server applies it to each submission, server/job_environment.h).
// Thread-safety: a pure function of its arguments.
#pragma once

#include "base/status.h"
#include "config/cluster_yaml.h"
#include "config/yaml_reader.h"

namespace sluice::config::yaml {

// Reads the section at `f` (null reads as empty: the defaults) into `jobs`.
// Errors: kInvalidArgument located at the offending field (Reader).
Status ReadJobs(const Reader& reader, const Field& f, JobPolicy& jobs);

}  // namespace sluice::config::yaml
