// The `quotas:` section of the cluster YAML (issue 19), read into config::Quotas
// (cluster_yaml.h):
//
//   quotas:
//     max_pending_per_user: <count>      # one user's waiting jobs, all queues together
//     max_array_elements_per_user: <count>  # one user's elements not yet jobs (5,000,000)
//     queues:
//       <queue name>: {max_pending: <count>, max_pending_per_user: <count>}
//
// "Waiting" is pending or held. Checks: only these keys; counts are non-negative integers;
// queue names are queues of the file. The core never sees this section (the server refuses
// submissions beyond it, server/pending_quota.h).
// Thread-safety: a pure function of its arguments.
#pragma once

#include <functional>
#include <set>
#include <string>

#include "base/status.h"
#include "config/cluster_yaml.h"
#include "config/yaml_reader.h"

namespace sluice::config::yaml {

// Reads the section at `f` (null reads as empty) into `quotas`; `queues` are the queue names
// defined. Errors: kInvalidArgument located at the offending field (Reader).
Status ReadQuotas(const Reader& reader, const Field& f,
                  const std::set<std::string, std::less<>>& queues, Quotas& quotas);

}  // namespace sluice::config::yaml
