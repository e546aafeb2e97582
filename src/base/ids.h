// Identifiers shared by every component.
//
// JobId is the user-visible, monotonic job number. Hosts and queues are addressed inside the
// core by dense indices into ClusterState's vectors, which never move once created.
#pragma once

#include <cstdint>

namespace sluice {

using JobId = int64_t;
using HostIndex = uint32_t;
using QueueIndex = uint32_t;
using ResourceId = uint32_t;  // index into the cluster's resource name table

inline constexpr JobId kNoJob = -1;

}  // namespace sluice
