// What the server does to every submission's environment and output (issue 47: "a job's
// environment is its submitter's, never the agent's"; "output is not thrown away by default"),
// by the cluster YAML's `jobs:` section (config/jobs_yaml.h):
//  - `env`, the submitter's environment as the client sent it (sbatch --export=ALL and bsub
//    send the caller's whole environment; --export=NONE none), loses every variable the deny
//    list matches (by default SLUICE_TOKEN, SLUICE_*_TOKEN and MUNGE_*: credentials never
//    travel) and, when an allow list is set, every variable it does not match. The agent then
//    runs the job with this environment plus the job's own variables, and nothing of its own;
//  - a job without `output` writes it to `default_output` (sluice-%j.out; arrays
//    sluice-%A_%a.out) in its working directory, as Slurm writes slurm-%j.out; the spec's
//    `output_default` marks it, and the agent discards the output (and says so in its log)
//    rather than failing the job when that file cannot be created, as an explicit -o would.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "config/cluster_yaml.h"

namespace sluice::server {

// Whether `name` matches the glob `pattern` (`*` matches any run of characters).
bool GlobMatches(std::string_view pattern, std::string_view name);

// Applies `policy` to a normalized spec (ParseSubmission): its env filtered, its output
// defaulted. Returns the names of the variables removed (for the log).
std::vector<std::string> ApplyJobPolicy(const config::JobPolicy& policy, nlohmann::json& spec);

}  // namespace sluice::server
