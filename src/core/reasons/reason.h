// Pending reasons as data (R-PR-1): why a job that could be waiting is waiting.
//
// A job's PendingReasons hold a main code, chosen by severity (kSeverityOrder below: the
// reason a user can do least about and that would still block the job if everything else
// were fine comes first), plus detail entries: per resource (needed / available), the job it
// waits behind, the time a reservation begins. Renderers turn them into `jobs -p` text
// (core/explain/render.h); the JSON names are the ToString() codes.
// Codes are added together with their text, JSON name, a unit test and a golden case
// (STYLE.md), so this list grows with the issues that implement each mechanism.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/time.h"

namespace sluice::core {

enum class ReasonCode : uint8_t {
  kNewJob,          // submitted after the last cycle; not evaluated yet
  kHeld,            // held by its owner or an administrator
  kBeginTime,       // asked not to start before its begin time
  kQueueInactive,   // its queue is inactive: it dispatches nothing
  kQueueRunLimit,   // its queue runs as many jobs (or slots) as its limit allows
  kPriorityWait,    // behind the queue's head under fifo
  kReserved,        // would fit now, but would delay the reservation of the queue's head
  kGated,           // behind a head whose aging gate is active (bounded_backfill)
  kNoResource,      // matching hosts that accept work lack free slots or resources
  kNoMatch,         // hosts whose attributes do not satisfy select[]
  kSharedResource,  // a cluster-wide resource (license) is short
  kExclusive,       // an exclusive job needs an idle host; matching hosts run other jobs
  kHostClosed,      // matching hosts are closed or draining
  kHostUnavail,     // matching hosts are unavailable (agent lost)
  kDependency,      // its dependency expression is not satisfied (or can never be)
  kQueueWindow,     // its queue's dispatch windows are closed now
  kQueueCapacity,   // its queue is at its maximum capacity (R-CAP-1)
  kUserLimit,       // its user holds the queue's minimum-user-limit share (R-CAP-2)
  kLimit,           // a named limit (R-Q-2) is reached
  kHostLimit,       // a per-host named limit is reached on the hosts it could use
  kFairshare,       // users with a higher fairshare priority go first (R-Q-4)
  kPreempting,      // slots are being freed for it; waiting for the victims to exit
  kDispatchFailed,  // an agent could not launch it; it will be retried
  kInternal,        // an evaluation error: a bug, never silent
  kArrayLimit,      // an array element held back by its array's `%N` cap (R-UX-3)
  kHostReserved,    // matching hosts are kept by an advance reservation the job would run into
  kReservationWait, // its advance reservation's window is not open (or it has none left)
  kReservationDenied,  // its advance reservation does not admit its user
};
inline constexpr ReasonCode kAllReasonCodes[] = {
    ReasonCode::kNewJob,        ReasonCode::kHeld,           ReasonCode::kBeginTime,
    ReasonCode::kQueueInactive, ReasonCode::kQueueRunLimit,  ReasonCode::kPriorityWait,
    ReasonCode::kReserved,      ReasonCode::kGated,          ReasonCode::kNoResource,
    ReasonCode::kNoMatch,       ReasonCode::kSharedResource, ReasonCode::kExclusive,
    ReasonCode::kHostClosed,    ReasonCode::kHostUnavail,    ReasonCode::kDependency,
    ReasonCode::kQueueWindow,   ReasonCode::kQueueCapacity,  ReasonCode::kUserLimit,
    ReasonCode::kLimit,         ReasonCode::kHostLimit,      ReasonCode::kFairshare,
    ReasonCode::kPreempting,    ReasonCode::kDispatchFailed, ReasonCode::kInternal,
    ReasonCode::kArrayLimit,    ReasonCode::kHostReserved,   ReasonCode::kReservationWait,
    ReasonCode::kReservationDenied,
};

// The JSON name: "NEW_JOB", "PRIORITY_WAIT", ...
std::string_view ToString(ReasonCode code);
// The plain-words headline used by `jobs -p`.
std::string_view Headline(ReasonCode code);
// Higher is more severe; the main reason is the most severe detail.
int Severity(ReasonCode code);

struct ReasonDetail {
  ReasonCode code = ReasonCode::kNewJob;
  std::string resource;      // kNoResource, kSharedResource: "slots" or a resource name
  int64_t needed = 0;        // kNoResource, kSharedResource
  int64_t available = 0;     // kNoResource, kSharedResource
  int32_t hosts = 0;         // host-level codes: how many hosts this applies to
  bool one_host = false;     // kNoResource: needed on a single host (span), not in total
  std::string same;          // kNoResource: needed among hosts sharing this attribute's value
  int32_t per_host = 0;      // kNoResource with resource "hosts": tasks each host must take
  std::string devices;       // kNoResource with resource "gpu": the devices' constraints, e.g.
                             // "NVLink-connected, gmodel=A100" (R-GPU-4)
  JobId job = kNoJob;        // kPriorityWait / kReserved / kGated: the head it waits behind
  Instant time = kInfinite;  // kReserved: when the head's reservation begins;
                             // kGated: since when the gate is active;
                             // kBeginTime: the begin time;
                             // kQueueWindow: when a window opens next;
                             // kPreempting: when the victims' grace ends;
                             // kHostReserved: when the reservation's window begins;
                             // kReservationWait: when its window opens (kInfinite: never)
  std::string limit;         // kLimit, kHostLimit, kUserLimit: the limit's name
  std::string scope;         // kLimit, kHostLimit, kArrayLimit: the consumer it applies to, e.g.
                             // "user alice", "queue normal", "host h001"; kNoResource: the
                             // one host that matches, when only one does; kHostReserved,
                             // kReservationWait, kReservationDenied: "reservation NAME"
  int64_t used = 0;          // kLimit, kHostLimit, kUserLimit, kQueueCapacity: in use
  int64_t max = 0;           // ... and the maximum (same unit as `resource`)
  Instant until = kInfinite;  // kHostReserved, kReservationWait: when that window ends
  std::string host_names;    // kHostReserved, kReservationWait: the reservation's hosts,
                             // compressed ("h[1-8]", base/host_list.h)
  std::string condition;     // kDependency: the unsatisfied condition, e.g. "done(12)"
  bool never = false;        // kDependency: the condition can never be satisfied

  friend bool operator==(const ReasonDetail&, const ReasonDetail&) = default;
};

// The details of one PendingReasons: a read-only vector that copies in O(1). A cycle hands
// the same reasons to every job that shares an unsatisfiable-cache entry (R-AL-5, issue 8:
// a million PendJobs per explained cycle), so copies share one immutable vector; push_back
// copies it first when another PendingReasons still shares it (copy on write).
class ReasonDetails {
 public:
  using value_type = ReasonDetail;
  using const_iterator = std::vector<ReasonDetail>::const_iterator;
  using iterator = const_iterator;

  ReasonDetails() = default;
  ReasonDetails(std::initializer_list<ReasonDetail> details)
      : shared_(details.size() == 0 ? nullptr
                                    : std::make_shared<std::vector<ReasonDetail>>(details)) {}

  const_iterator begin() const { return items().begin(); }
  const_iterator end() const { return items().end(); }
  size_t size() const { return items().size(); }
  bool empty() const { return items().empty(); }
  const ReasonDetail& operator[](size_t i) const { return items()[i]; }
  const ReasonDetail& front() const { return items().front(); }
  const ReasonDetail& back() const { return items().back(); }
  void push_back(ReasonDetail detail);

  friend bool operator==(const ReasonDetails& a, const ReasonDetails& b) {
    return a.shared_ == b.shared_ || a.items() == b.items();
  }

 private:
  const std::vector<ReasonDetail>& items() const { return shared_ ? *shared_ : Empty(); }
  static const std::vector<ReasonDetail>& Empty();

  std::shared_ptr<std::vector<ReasonDetail>> shared_;  // null when empty
};

struct PendingReasons {
  ReasonCode main = ReasonCode::kNewJob;
  ReasonDetails details;

  // Adds a detail and raises `main` when the detail is more severe than all before it.
  void Add(ReasonDetail detail);
  bool empty() const { return details.empty(); }
  friend bool operator==(const PendingReasons&, const PendingReasons&) = default;
};

}  // namespace sluice::core
