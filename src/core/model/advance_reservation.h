// Advance reservations (SPEC §19, R-RSV-1, R-RSV-2): whole hosts kept for chosen users over
// windows of time — maintenance, a course, a deadline run — in the same time plan as
// backfill and estimates.
//
// The rule (R-RSV-2), for a job j and a host h at time `now`, where j would run until
// E(j) = now + its run limit (kInfinite without one):
//   - j outside any reservation may use h unless some window [b, e) of a reservation on h
//     has e > now and b < E(j): it must end by its run limit before the window begins;
//   - j inside reservation R (JobSpec::reservation) may run only while a window of R is
//     open and only on R's hosts, where it ends with the window (E(j) is at most the
//     window's end + R's overrun); it too must end before any OTHER reservation's window on
//     h begins — so a MAINT window laid over R's hosts (the only overlap allowed) outranks R.
// A host therefore carries one number per cycle for jobs outside reservations: the earliest
// begin of a window on it that has not ended (ReservedFrom); E(j) ≤ that number lets j in.
//
// Windows are in core time (the drivers convert wall time with ClusterConfig::epoch_offset)
// and are expanded by the drivers: a recurring reservation (cron and a time zone) arrives
// as its next occurrences, so the core never reads a calendar or a clock.
//
// Representation: entries_ in name order (deterministic iteration); by_host_ lists, per host
// index, the entries on it (empty for most hosts). Immutable between Set() calls except for
// ResolveHosts after hosts are added. Thread-safety: none; owned by ClusterState.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/status.h"
#include "base/time.h"

namespace sluice::core {

class Topology;

struct ReservationWindow {
  Instant begin = 0;  // inclusive
  Instant end = 0;    // exclusive

  friend bool operator==(const ReservationWindow&, const ReservationWindow&) = default;
};

struct AdvanceReservationSpec {
  std::string name;
  std::vector<std::string> hosts;          // whole hosts
  std::vector<ReservationWindow> windows;  // sorted by begin, disjoint, non-empty
  // Who may run inside it (ReservationBook::Admits); both empty: its creator only, which the
  // controller puts in `users`.
  std::vector<std::string> users;
  std::vector<std::string> groups;
  bool maint = false;    // a maintenance window: may overlap other reservations, outranks them
  Duration overrun = 0;  // how long a job inside it may run past a window's end

  friend bool operator==(const AdvanceReservationSpec&, const AdvanceReservationSpec&) = default;
};

class ReservationBook {
 public:
  // Replaces every reservation. Errors (kInvalidArgument naming the reservation): an empty
  // or repeated name, no hosts or an unknown host, a window that is empty or overlaps or
  // precedes the one before it, a negative overrun, and two reservations that are not
  // MAINT with overlapping windows on a common host. A refused set changes nothing.
  Status Set(std::vector<AdvanceReservationSpec> specs, const Topology& topology);
  // Hosts were added: the index grows to cover them (names never change index).
  void ResolveHosts(const Topology& topology);

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const AdvanceReservationSpec& spec(int32_t r) const { return entries_[Index(r)].spec; }
  // The entry named `name`, or -1.
  int32_t Find(std::string_view name) const;

  // The earliest begin of a window that ends after `now` among the reservations on `host`
  // other than `except` (-1: none excepted); kInfinite when there is none.
  Instant ReservedFrom(HostIndex host, Instant now, int32_t except = -1) const;
  // The reservation whose window ReservedFrom found (for reasons), or -1.
  int32_t FirstReservationOn(HostIndex host, Instant now, int32_t except = -1) const;
  // Whether reservation `r` holds `host`.
  bool Covers(int32_t r, HostIndex host) const;
  // The window of `r` open at `now`, and the first window of `r` that ends after `now`.
  std::optional<ReservationWindow> OpenWindow(int32_t r, Instant now) const;
  std::optional<ReservationWindow> NextWindow(int32_t r, Instant now) const;
  // The first window boundary (a begin or an end) of any reservation after `now`.
  std::optional<Instant> NextBoundaryAfter(Instant now) const;
  // Whether `user` may run jobs in `r`: one of its users; or any user when it names groups,
  // whose members only the drivers can tell (the controller refuses a non-member's job at
  // submission; the core reads no account database); or any user when it names neither
  // (the controller never sends that: it lists the creator; a simulated one is open).
  bool Admits(int32_t r, std::string_view user) const;
  // `r`'s hosts compressed for reasons ("h[1-8]", base/host_list.h), made once by Set.
  const std::string& HostList(int32_t r) const { return entries_[Index(r)].host_list; }

 private:
  struct Entry {
    AdvanceReservationSpec spec;
    std::vector<HostIndex> hosts;  // sorted
    std::string host_list;         // CompressHostList(spec.hosts)
  };
  static size_t Index(int32_t r) { return static_cast<size_t>(r); }
  void IndexHosts(size_t host_count);

  std::vector<Entry> entries_;
  std::vector<std::vector<int32_t>> by_host_;
};

}  // namespace sluice::core
