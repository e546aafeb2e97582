// The `auth:` section of the cluster YAML (R-SRV-5b, R-SEC-2), read into an AuthConfig
// (cluster_yaml.h):
//
//   auth:
//     agent_token: <name>              # optional; or agent_token_sha256: <64 hex digits>
//     allow_dynamic_hosts: <bool>      # default false: agents serve only the YAML's hosts
//     users:                           # optional list; token or token_sha256, not both
//       - {name: <name>, token: <name>, admin: <bool, default false>,
//          unix_user: <account its jobs run as, default: name>}
//       - {name: <name>, token_sha256: <64 hex digits>}
//     admins: [<name>, ...]            # optional: administrators by account or user name
//     munge: {socket: <path>}          # optional: accept MUNGE credentials (`munge: {}`)
//     allow_root_jobs: <bool, default false>   # accept jobs whose account has uid 0
//
// Checks: only these keys; a user has a name and exactly one of token and token_sha256;
// user names are unique; clear tokens (the agent's and every user's) are distinct, and so are
// digests; a digest is 64 hex digits (stored lowercase); a socket is an absolute path. The
// core never sees this section.
// Thread-safety: a pure function of its arguments.
// Implements R-SRV-5b (configuration side), R-SEC-2 (its configuration).
#pragma once

#include "base/status.h"
#include "config/cluster_yaml.h"
#include "config/yaml_reader.h"

namespace sluice::config::yaml {

// Reads the section at `f` (null reads as empty) into `auth`, appending its users.
// Errors: kInvalidArgument located at the offending field (Reader).
Status ReadAuth(const Reader& reader, const Field& f, AuthConfig& auth);

}  // namespace sluice::config::yaml
