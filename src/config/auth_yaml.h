// The `auth:` section of the cluster YAML (R-SRV-5b), read into an AuthConfig (cluster_yaml.h):
//
//   auth:
//     agent_token: <name>              # optional; without it no agent may connect
//     allow_dynamic_hosts: <bool>      # default false: agents serve only the YAML's hosts
//     users:                           # optional list
//       - {name: <name>, token: <name>, admin: <bool, default false>}
//
// Checks: only these keys; a user has a name and a token; user names are unique; tokens
// (the agent's and every user's) are distinct. The core never sees this section.
// Thread-safety: a pure function of its arguments.
// Implements R-SRV-5b (configuration side).
#pragma once

#include "base/status.h"
#include "config/cluster_yaml.h"
#include "config/yaml_reader.h"

namespace sluice::config::yaml {

// Reads the section at `f` (null reads as empty) into `auth`, appending its users.
// Errors: kInvalidArgument located at the offending field (Reader).
Status ReadAuth(const Reader& reader, const Field& f, AuthConfig& auth);

}  // namespace sluice::config::yaml
