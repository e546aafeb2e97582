// Synthetic cluster and pending-job generator for `sluice bench` and the differential test
// (issue 8): a seeded, deterministic cluster of hosts with varied slots, memory and
// attributes, running jobs that fill it (all but `free_slots` slots), and pending jobs drawn
// from a fixed set of request shapes (select expressions, rusage, spans, compounds,
// alternatives).
//
// Cluster: host i has slots from {4, 8, 16, 32, 64}, mem = slots x {2000, 4000, 8000} MB,
// type x86 (60%) / arm (25%) / gpu (15%, with 4 gpus), model m1..m8, rack r001.., tags ssd
// (30%) and ib (50%). Queues q1..qQ, priorities descending, all on every host, one policy.
// Shapes: request text plus task range and exclusive flag, drawn from templates; K shapes
// are K draws (duplicates possible for small templates, so at most K distinct requests).
// Determinism: one std::mt19937_64 seeded with `seed`, raw output only (no
// std::*_distribution, whose output is implementation-defined).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/model/cluster_state.h"

namespace sluice::sim {

struct SyntheticOptions {
  int32_t hosts = 10000;
  int64_t pending = 1000000;
  int32_t shapes = 1000;
  int32_t queues = 4;
  int32_t users = 100;
  int64_t running = -1;    // running jobs that fill the cluster; -1: one per host
  int64_t free_slots = 0;  // slots left free, on hosts drawn at random
  uint64_t seed = 1;
  core::PolicyKind policy = core::PolicyKind::kEasyBackfill;
};

// One request shape: what a pending job asks for.
struct SyntheticShape {
  std::string resreq;
  int32_t min_tasks = 1;
  int32_t max_tasks = 1;
  bool exclusive = false;
};

// The cluster's configuration (hosts and queues).
core::ClusterConfig SyntheticCluster(const SyntheticOptions& options);

// `options.shapes` request shapes.
std::vector<SyntheticShape> SyntheticShapes(const SyntheticOptions& options);

// Submits and starts running jobs (ids 1..) so that every host is full except
// `options.free_slots` slots spread over random hosts (never more than the cluster has).
// Running jobs take the host's memory in proportion to their slots. Returns the next id.
Result<JobId> FillRunning(const SyntheticOptions& options, core::ClusterState& state);

// Submits `options.pending` pending jobs from `shapes`, with ids from `first_id`, spread over
// queues, users and projects, with run limits and a few priorities.
Status SubmitPending(const SyntheticOptions& options, const std::vector<SyntheticShape>& shapes,
                     JobId first_id, core::ClusterState& state);

}  // namespace sluice::sim
