// Job: what a user submitted (JobSpec, immutable) and where it is in its life (Job).
//
// States follow SPEC §2: PENDING and HELD wait in their queue; ADMITTING is the server's
// recorded-but-not-yet-launched phase; RUNNING holds an Allocation; DONE, EXIT and CANCELLED
// are terminal. An EXIT job carries an ExitCause. Invariant: a job holds an allocation
// exactly when it is ADMITTING or RUNNING.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/interned_text.h"
#include "base/packed_optional.h"
#include "base/time.h"
#include "core/model/config.h"
#include "core/resreq/request.h"

namespace sluice::core {

enum class JobState : uint8_t { kPending, kHeld, kAdmitting, kRunning, kDone, kExit, kCancelled };
std::string_view ToString(JobState state);
bool IsTerminal(JobState state);

// Why a job ended in EXIT (machine-readable; the message carries the human text).
enum class ExitCause : uint8_t { kNone, kNonZeroExit, kUnschedulable, kRunLimit, kHostLost };
std::string_view ToString(ExitCause cause);

// Immutable specification of a job, as submitted (SPEC §2, R-SIM-4).
// Member order and types (issue 45): the names a site has few of (user, project, queue,
// reservation) are interned, 8 bytes each instead of a string's 32, and the small members sit
// together, so that a Job fits mimalloc's 384-byte size class (see Job).
struct JobSpec {
  JobId id = kNoJob;
  std::string name;
  InternedText user;
  InternedText project;
  InternedText queue;  // empty: the cluster's default queue
  std::string command;
  std::string resreq;  // resource request string (SPEC §3); empty: any slots
  int32_t min_tasks = 1;
  int32_t max_tasks = 1;
  // Kill limit and backfill estimate; none: never assumed to end.
  PackedOptional<Duration> run_limit;
  int32_t priority = 0;
  bool exclusive = false;  // beside priority: no hole (a designated initializer names them
  bool hold = false;       // before submit_time)
  Instant submit_time = 0;
  Instant begin_time = 0;
  std::string depend;
  // The advance reservation it runs in (R-RSV-2, `-U NAME`); empty: none.
  InternedText reservation;
};

// An amount of one consumable resource (host or shared, by context).
struct ResourceAmount {
  ResourceId id = 0;
  int64_t amount = 0;

  friend bool operator==(const ResourceAmount&, const ResourceAmount&) = default;
};

// Tasks and resources granted on one host. An exclusive job's grant holds the whole host
// (`whole_host`): no other job may use it while the job runs (R-AL-7), whatever `slots` is.
struct HostGrant {
  HostIndex host = 0;
  int32_t slots = 0;  // tasks placed on the host
  bool whole_host = false;
  std::vector<ResourceAmount> resources;  // host resources, by ResourceId
  // The GPUs it holds by index (bit i: device i, R-GPU-3); `resources` counts them too, as
  // the `gpu` resource, so limits and capacity sums need not read the mask.
  uint64_t gpus = 0;
  // Shared mode (gpu[mode=shared:gmem=M]): the device memory reserved on each of `gpus`, which
  // other shared grants may hold too; such a grant does not count them in `gpu`. 0: held whole.
  int64_t gpu_mem_mb = 0;

  friend bool operator==(const HostGrant&, const HostGrant&) = default;
};

// Everything a started job holds; hosts are sorted by host index.
struct Allocation {
  std::vector<HostGrant> hosts;
  std::vector<ResourceAmount> shared;  // cluster-wide resources (licenses), per job

  int32_t TotalSlots() const;
  int32_t TotalGpus() const;  // devices held on all hosts
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

// The admission record of a pending job (R-ADM-3): what the store persists so that queue
// order, bypass counts, first-blocked times and gates survive restarts. The enqueue
// sequence and time and the spec digest never change; the head fields change only through
// UpdateAdmission decisions and are reset only by the job leaving the queue (admission,
// cancellation, unschedulability).
enum class AdmissionPhase : uint8_t { kPending, kAdmitting, kAdmitted, kEnded };
std::string_view ToString(AdmissionPhase phase);

struct AdmissionRecord {
  Instant enqueue_time = 0;
  uint64_t spec_digest = 0;               // of the immutable JobSpec (the request snapshot is
                                          // spec.resreq, compiled into Job::request)
  PolicyKind policy = PolicyKind::kFifo;  // the queue's policy when the job was enqueued
  // Beside policy (one byte each), and the optional times packed: 48 bytes (issue 45).
  AdmissionPhase phase = AdmissionPhase::kPending;
  int32_t bypass_count = 0;               // later jobs admitted while this job was the blocked head
  PackedOptional<Instant> first_blocked;  // first cycle it was head and temporarily unavailable
  PackedOptional<Instant> gate_since;     // when its aging gate activated (bounded_backfill)
  uint64_t epoch = 0;  // controller epoch that last wrote the record (server)

  bool gate_active() const { return gate_since.has_value(); }
  friend bool operator==(const AdmissionRecord&, const AdmissionRecord&) = default;
};

// Digest of the fields of a JobSpec that identify it (deterministic across runs).
uint64_t SpecDigest(const JobSpec& spec);

// Member order (issue 45): the one-byte members together, so that a Job is at most 368 bytes and
// its node in the job table (key and next pointer beside it) fills mimalloc's 384-byte size
// class instead of 512. tests/core/model/job_layout_test.cc keeps it there.
struct Job {
  JobSpec spec;
  JobState state = JobState::kPending;
  ExitCause exit_cause = ExitCause::kNone;
  bool classified = false;  // static feasibility checked (R-ADM-1) by some cycle
  // An array element held back by its array's `%N` cap (R-UX-3: ARRAY_LIMIT); set by
  // ClusterState so that at most `cap` elements run, whatever this cycle starts.
  bool array_limited = false;
  QueueIndex queue = 0;
  uint64_t seq = 0;  // enqueue sequence: the final tie-break of queue order
  AdmissionRecord admission;
  Instant start_time = 0;   // valid when RUNNING or after
  uint64_t start_seq = 0;   // global start order, for EASY's tie-break
  Instant end_time = 0;     // valid when terminal
  int32_t exit_code = 0;
  // The fewest slots any alternative of the request can run with (R-RR-6: classification
  // and reservations use the minimum).
  int32_t min_slots = 1;
  Allocation allocation;         // valid when ADMITTING or RUNNING
  JobId preempted_for = kNoJob;  // RUNNING: being preempted so that this job can start
  // The compiled request (the job's resreq, or its queue's default), shared by every job
  // with the same text and owned by the ClusterState. Never null once submitted.
  const resreq::Request* request = nullptr;

  // start_time + run_limit, or kInfinite when the job has no run limit.
  Instant EstimatedEnd() const {
    return AddDuration(start_time, spec.run_limit.value_or(kInfinite));
  }
};

}  // namespace sluice::core
