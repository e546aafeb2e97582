#include "core/model/advance_reservation.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "base/host_list.h"
#include "core/model/topology.h"

namespace sluice::core {
namespace {

Status Refuse(const AdvanceReservationSpec& spec, const std::string& what) {
  return InvalidArgument("reservation '" + spec.name + "': " + what);
}

// Windows sorted, non-empty and disjoint; the overrun not negative.
Status CheckWindows(const AdvanceReservationSpec& spec) {
  if (spec.windows.empty()) return Refuse(spec, "no window");
  if (spec.overrun < 0) return Refuse(spec, "the overrun is negative");
  Instant previous_end = std::numeric_limits<Instant>::min();
  for (const ReservationWindow& w : spec.windows) {
    if (w.end <= w.begin) {
      return Refuse(spec, "window [" + std::to_string(w.begin) + ", " + std::to_string(w.end) +
                              ") is empty");
    }
    if (w.begin < previous_end) {
      return Refuse(spec, "window [" + std::to_string(w.begin) + ", " + std::to_string(w.end) +
                              ") overlaps or precedes the one before it");
    }
    previous_end = w.end;
  }
  return Status::Ok();
}

bool Overlap(const std::vector<ReservationWindow>& a, const std::vector<ReservationWindow>& b) {
  // Both sorted and disjoint: a merge walk.
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].begin < b[j].end && b[j].begin < a[i].end) return true;
    if (a[i].end <= b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return false;
}

// The first window of `windows` (sorted, disjoint) that ends after `now`.
const ReservationWindow* FirstEndingAfter(const std::vector<ReservationWindow>& windows,
                                          Instant now) {
  auto it = std::upper_bound(windows.begin(), windows.end(), now,
                             [](Instant t, const ReservationWindow& w) { return t < w.end; });
  return it == windows.end() ? nullptr : &*it;
}

}  // namespace

Status ReservationBook::Set(std::vector<AdvanceReservationSpec> specs, const Topology& topology) {
  std::sort(specs.begin(), specs.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<Entry> entries;
  entries.reserve(specs.size());
  for (AdvanceReservationSpec& spec : specs) {
    if (spec.name.empty()) return InvalidArgument("a reservation has no name");
    if (!entries.empty() && entries.back().spec.name == spec.name) {
      return Refuse(spec, "the name is used twice");
    }
    if (spec.hosts.empty()) return Refuse(spec, "no hosts");
    if (Status s = CheckWindows(spec); !s.ok()) return s;
    Entry entry;
    for (const std::string& name : spec.hosts) {
      std::optional<HostIndex> host = topology.FindHost(name);
      if (!host) return Refuse(spec, "unknown host '" + name + "'");
      entry.hosts.push_back(*host);
    }
    std::sort(entry.hosts.begin(), entry.hosts.end());
    entry.hosts.erase(std::unique(entry.hosts.begin(), entry.hosts.end()), entry.hosts.end());
    entry.host_list = CompressHostList(spec.hosts);
    entry.spec = std::move(spec);
    entries.push_back(std::move(entry));
  }
  // Two reservations on one host at one time: only when one of them is a MAINT window.
  std::map<HostIndex, std::vector<size_t>> on_host;
  for (size_t r = 0; r < entries.size(); ++r) {
    for (HostIndex h : entries[r].hosts) on_host[h].push_back(r);
  }
  for (const auto& [host, list] : on_host) {
    for (size_t a = 0; a < list.size(); ++a) {
      for (size_t b = a + 1; b < list.size(); ++b) {
        const Entry& x = entries[list[a]];
        const Entry& y = entries[list[b]];
        if (x.spec.maint || y.spec.maint || !Overlap(x.spec.windows, y.spec.windows)) continue;
        return Refuse(y.spec, "overlaps reservation '" + x.spec.name + "' on host " +
                                  topology.hosts()[host].spec.name +
                                  " (only a MAINT reservation may overlap another)");
      }
    }
  }
  entries_ = std::move(entries);
  IndexHosts(topology.hosts().size());
  return Status::Ok();
}

void ReservationBook::ResolveHosts(const Topology& topology) {
  IndexHosts(topology.hosts().size());
}

void ReservationBook::IndexHosts(size_t host_count) {
  by_host_.assign(entries_.empty() ? 0 : host_count, {});
  for (size_t r = 0; r < entries_.size(); ++r) {
    for (HostIndex h : entries_[r].hosts) by_host_[h].push_back(static_cast<int32_t>(r));
  }
}

int32_t ReservationBook::Find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.spec.name < n; });
  if (it == entries_.end() || it->spec.name != name) return -1;
  return static_cast<int32_t>(it - entries_.begin());
}

int32_t ReservationBook::FirstReservationOn(HostIndex host, Instant now, int32_t except) const {
  if (host >= by_host_.size()) return -1;
  int32_t first = -1;
  Instant earliest = kInfinite;
  for (int32_t r : by_host_[host]) {
    if (r == except) continue;
    const ReservationWindow* w = FirstEndingAfter(entries_[Index(r)].spec.windows, now);
    if (w != nullptr && w->begin < earliest) {
      earliest = w->begin;
      first = r;
    }
  }
  return first;
}

Instant ReservationBook::ReservedFrom(HostIndex host, Instant now, int32_t except) const {
  const int32_t r = FirstReservationOn(host, now, except);
  if (r < 0) return kInfinite;
  return FirstEndingAfter(entries_[Index(r)].spec.windows, now)->begin;
}

bool ReservationBook::Covers(int32_t r, HostIndex host) const {
  const std::vector<HostIndex>& hosts = entries_[Index(r)].hosts;
  return std::binary_search(hosts.begin(), hosts.end(), host);
}

std::optional<ReservationWindow> ReservationBook::NextWindow(int32_t r, Instant now) const {
  const ReservationWindow* w = FirstEndingAfter(entries_[Index(r)].spec.windows, now);
  if (w == nullptr) return std::nullopt;
  return *w;
}

std::optional<ReservationWindow> ReservationBook::OpenWindow(int32_t r, Instant now) const {
  std::optional<ReservationWindow> w = NextWindow(r, now);
  if (!w || w->begin > now) return std::nullopt;
  return w;
}

std::optional<Instant> ReservationBook::NextBoundaryAfter(Instant now) const {
  std::optional<Instant> next;
  for (const Entry& e : entries_) {
    const ReservationWindow* w = FirstEndingAfter(e.spec.windows, now);
    if (w == nullptr) continue;
    const Instant t = w->begin > now ? w->begin : w->end;
    if (!next || t < *next) next = t;
  }
  return next;
}

bool ReservationBook::Admits(int32_t r, std::string_view user) const {
  const AdvanceReservationSpec& spec = entries_[Index(r)].spec;
  if (!spec.groups.empty() || spec.users.empty()) return true;
  return std::find(spec.users.begin(), spec.users.end(), user) != spec.users.end();
}

}  // namespace sluice::core
