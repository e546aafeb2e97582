// The `reservations:` section of the cluster YAML (issue 42, R-RSV-1), read into
// config::UserReservationPolicy (cluster_yaml.h):
//
//   reservations:
//     user_reservations:        # absent: only administrators make reservations
//       max_hosts: <count>      # hosts one user reservation may hold (unset: no cap)
//       max_duration: <dur>     # one window's length at most: 90, 90s, 30m, 4h (unset: no cap)
//       users: [<name>, ...]    # who may; with groups, both empty or absent: every user
//       groups: [<group>, ...]  # members of these UNIX groups may too
//
// Checks: only these keys; `user_reservations` is a map (an empty one: every user, no caps);
// max_hosts >= 1; max_duration within [1 s, 366 days]; users and groups are lists of distinct
// names. The core never sees this section (the server applies it, server/advance_reservations.h).
// Thread-safety: a pure function of its arguments.
#pragma once

#include "base/status.h"
#include "config/cluster_yaml.h"
#include "config/yaml_reader.h"

namespace sluice::config::yaml {

// Reads the section at `f` (null reads as empty: users may make none) into `policy`.
// Errors: kInvalidArgument located at the offending field (Reader).
Status ReadReservationPolicy(const Reader& reader, const Field& f, UserReservationPolicy& policy);

}  // namespace sluice::config::yaml
