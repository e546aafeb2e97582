// Capacity: free slots and resources as one scheduling cycle sees them.
//
// Built from the ClusterState when a cycle first needs it, then debited by every allocation the
// cycle makes, so later decisions in the same cycle see earlier ones. Hosts that do not
// accept work (closed, unavail, draining) have nothing free here. Within a cycle capacity
// only shrinks (R-AL-5).
//
// The allocator also claims tentatively while it tries plans, compound parts and
// alternatives: Claim*() append to an undo log and Rollback(mark) returns to an earlier
// Mark(), so a failed attempt leaves no trace (R-AL-1). Debit() is the committed form.
// Representation: dense vectors by host (and host x resource, row-major).
// Cost to build: a copy of the state's dense per-host slots and free-host index
// (Topology::host_slots()), plus O(hosts x resources) when hosts define resources; O(1) per
// claim and rollback step. Reset() rebuilds into the buffers an earlier cycle used, so a
// driver that keeps one Capacity across cycles (CycleWorkspace) allocates nothing per cycle.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "core/model/cluster_state.h"
#include "core/model/job.h"

namespace sluice::core {

// What advance reservations (R-RSV-2) make of one job this cycle: when it would end, and the
// reservation it runs in.
struct ReservationTerms {
  static constexpr int32_t kNone = -1;     // in no reservation
  static constexpr int32_t kMissing = -2;  // names a reservation that does not exist
  Instant end = kInfinite;                 // E(j): now + run limit, capped by its window
  int32_t reservation = kNone;             // ReservationBook entry
};

class Capacity {
 public:
  // No hosts: a buffer for Reset() (CycleWorkspace keeps one between cycles).
  Capacity() = default;
  explicit Capacity(const ClusterState& state) { Reset(state); }
  // Makes this the capacity Capacity(state) would build, whatever earlier claims, debits,
  // withheld hosts, cursors and caches it held, reusing its buffers.
  void Reset(const ClusterState& state);
  // The cluster as if idle and every host accepted work: everything configured is free.
  // Static feasibility (R-ADM-1) is a nomination against this capacity.
  static Capacity AllConfigured(const ClusterState& state);

  size_t host_count() const { return free_slots_.size(); }
  size_t resource_count() const { return resource_count_; }
  int32_t FreeSlots(HostIndex host) const { return free_slots_[host]; }
  int64_t FreeResource(HostIndex host, ResourceId id) const {
    return id < resource_count_ ? free_resources_[host * resource_count_ + id] : 0;
  }
  int64_t FreeShared(ResourceId id) const { return free_shared_[id]; }
  // Whether the host defines host resource `id` (a total of 0 is still defined). `state` is
  // the state the Capacity was built from; the table is built on first use (most cycles of a
  // trace replay never evaluate a select on a resource).
  bool Defines(const ClusterState& state, HostIndex host, ResourceId id) const {
    if (id >= resource_count_) return false;
    if (defines_.empty()) FillDefines(state);
    return defines_[host * resource_count_ + id] != 0;
  }
  // Every host's value of attribute `name` by host index (nullptr: the host has none), built
  // on first use in the cycle: select[] and order[] scans then read it without a map lookup.
  // `state` is the state the Capacity was built from (not kept: states move).
  const std::vector<const std::string*>& AttributeColumn(const ClusterState& state,
                                                         std::string_view name) const;
  // No job runs on the host and nothing was claimed on it: an exclusive job may take it.
  bool Idle(HostIndex host) const { return idle_[host] && free_slots_[host] == total_slots_[host]; }
  int32_t TotalSlots(HostIndex host) const { return total_slots_[host]; }
  // The most slots any host is configured with: no host ever has more free, so a search for
  // one host that takes more tasks need not look (on one-slot hosts, any job of two tasks).
  // Computed on first use, and kept by a Reset that finds the configured slots unchanged.
  int32_t MaxHostSlots() const {
    if (max_host_slots_ < 0) {
      max_host_slots_ =
          total_slots_.empty() ? 0 : *std::max_element(total_slots_.begin(), total_slots_.end());
    }
    return max_host_slots_;
  }
  bool AcceptsWork(HostIndex host) const { return accepts_work_[host]; }
  // Free slots on all hosts that accept work.
  int64_t TotalFree() const { return total_free_; }

  // The lowest host index that may have a free slot: every host before it has none. Lets a
  // first-fit search skip the full front of a filling cluster (amortized O(1) per claim).
  HostIndex FirstMaybeFree() {
    while (first_free_ < free_slots_.size() && free_slots_[first_free_] == 0) ++first_free_;
    return first_free_;
  }
  // Calls fn(h) for every host with a free slot, in host order, from an index of such hosts
  // (one bit per host, kept by claims, rollbacks, credits and debits): a scan of a full
  // cluster costs hosts/64 word reads. `fn` must not claim or roll back.
  template <typename Fn>
  void ForEachHostWithFree(Fn&& fn) const {
    for (size_t w = 0; w < has_free_.size(); ++w) {
      for (uint64_t bits = has_free_[w]; bits != 0; bits &= bits - 1) {
        fn(static_cast<HostIndex>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
      }
    }
  }
  // The same walk from host `from` on, until fn(h) returns false: a first-fit search skips
  // the full hosts between the free ones 64 at a time instead of reading each.
  template <typename Fn>
  void ForEachHostWithFreeFrom(HostIndex from, Fn&& fn) const {
    size_t w = from / 64;
    if (w >= has_free_.size()) return;
    uint64_t bits = has_free_[w] & (~uint64_t{0} << (from % 64));
    while (true) {
      for (; bits != 0; bits &= bits - 1) {
        if (!fn(static_cast<HostIndex>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))))) {
          return;
        }
      }
      if (++w == has_free_.size()) return;
      bits = has_free_[w];
    }
  }

  // GPUs (R-GPU-3): the devices no job holds or claimed, by host; 0 on every host of a
  // cluster without GPUs (nothing is copied for them).
  uint64_t FreeGpus(HostIndex host) const { return gpu_free_.empty() ? 0 : gpu_free_[host]; }
  // Calls fn(h) for every host with at least `need` free GPUs, the fewest free first and
  // then in host order, until fn(h) returns false: best fit, so that partly used hosts fill
  // up and whole ones stay whole for wide jobs. Its index is built on first use in a cycle
  // (hosts/64 words per device count) and then kept by claims and rollbacks.
  // `fn` must not claim or roll back.
  template <typename Fn>
  void ForEachHostByFreeGpus(int32_t need, Fn&& fn) {
    if (gpu_free_.empty()) return;
    if (gpu_buckets_.empty()) IndexGpuBuckets();
    for (size_t c = static_cast<size_t>(std::max(need, 1)); c < gpu_buckets_.size(); ++c) {
      if (gpu_bucket_sizes_[c] == 0) continue;
      const std::vector<uint64_t>& bucket = gpu_buckets_[c];
      for (size_t w = 0; w < bucket.size(); ++w) {
        for (uint64_t bits = bucket[w]; bits != 0; bits &= bits - 1) {
          if (!fn(static_cast<HostIndex>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))))) {
            return;
          }
        }
      }
    }
  }

  // Shared mode: the devices of `host` a shared grant reserving `mem_mb` on each may take
  // now: no job holds or claimed them whole, and each has that much memory left after what
  // running jobs reserve (none on an AllConfigured capacity) and this cycle's claims.
  uint64_t ShareableGpus(const Host& host, int64_t mem_mb) const;
  // Calls fn(h), in host order, for every host some of whose devices are shared by running
  // jobs (none on an AllConfigured capacity) or by this cycle's claims, until fn returns
  // false: where a shared request packs first.
  // Cost: one step per such host (a merge of the two ordered sources).
  template <typename Fn>
  void ForEachHostSharingGpus(const Topology& topology, Fn&& fn) const {
    static const std::set<HostIndex> kNone;
    const std::set<HostIndex>& running = all_configured_ ? kNone : topology.gpu_shared_hosts();
    auto a = running.begin();
    auto b = gpu_mem_claimed_.begin();
    while (a != running.end() || b != gpu_mem_claimed_.end()) {
      HostIndex h = 0;
      if (b == gpu_mem_claimed_.end() || (a != running.end() && *a < b->first)) {
        h = *a++;
      } else {
        h = b->first;
        if (a != running.end() && *a == h) ++a;
        ++b;
      }
      if (!fn(h)) return;
    }
  }

  // By host, its devices of model `model` (any model when empty) with at least `mem_mb` of
  // memory; nullptr when neither is asked (every device matches). Built on first use in the
  // cycle from the state the Capacity was built from.
  const std::vector<uint64_t>* GpuMatchColumn(const ClusterState& state, const std::string& model,
                                              int64_t mem_mb) const;

  // Hosts withheld for a gated head (R-ADM-2): jobs of later queues may not use them this
  // cycle. `WithheldFor` names the head, kNoJob when the host is not withheld.
  void Withhold(HostIndex host, JobId head, Instant gate_since) {
    if (withheld_for_.empty()) withheld_for_.assign(free_slots_.size(), kNoJob);
    if (withheld_for_[host] == kNoJob) {
      withheld_for_[host] = head;
      withheld_since_ = gate_since;
    }
  }
  JobId WithheldFor(HostIndex host) const {
    return withheld_for_.empty() ? kNoJob : withheld_for_[host];
  }
  Instant withheld_since() const { return withheld_since_; }

  // Advance reservations (R-RSV-2, advance_reservation.h) at the cycle's `now`: the cycle
  // sets them after Reset. Until then, or with none, every host admits every job.
  void SetReservations(const ClusterState& state, Instant now);
  bool has_reservations() const { return book_ != nullptr; }
  ReservationTerms TermsOf(const Job& job) const;
  // Whether a job with `terms` may use `host`: outside a reservation, it ends before every
  // window on the host begins; inside one, the host is the reservation's and the job ends
  // before any other reservation's window on it begins.
  bool ReservationAdmits(HostIndex host, const ReservationTerms& terms) const {
    if (book_ == nullptr) return true;
    if (terms.reservation == ReservationTerms::kNone) return reserved_from_[host] >= terms.end;
    return terms.reservation >= 0 && book_->Covers(terms.reservation, host) &&
           book_->ReservedFrom(host, reservation_now_, terms.reservation) >= terms.end;
  }
  // The reservation keeping a job with `terms` off `host` (for reasons), or -1.
  int32_t ReservationAgainst(HostIndex host, const ReservationTerms& terms) const {
    if (book_ == nullptr) return -1;
    return book_->FirstReservationOn(host, reservation_now_, terms.reservation);
  }
  const ReservationBook* reservations() const { return book_; }
  Instant reservation_now() const { return reservation_now_; }

  // Per static select expression: the lowest host index that may both pass the select and
  // have a free slot (every host before it fails one of the two). The allocator advances it;
  // Rollback moves every cursor back to a host it frees. kNoExpr uses FirstMaybeFree().
  HostIndex& SelectCursor(uint32_t select) { return select_cursors_[select]; }

  // Tentative claims, undone by Rollback(). REQUIRES: the amounts are free.
  void ClaimHost(const HostGrant& grant);
  void ClaimShared(const ResourceAmount& amount);
  size_t Mark() const { return undo_.size(); }
  void Rollback(size_t mark);

  // Preempt mode (R-AL-6): gives back what a running job holds, building the capacity "as if
  // these victims were gone" on a trial copy. `now_idle`: no other job runs on the host.
  // Not undoable; never used on the cycle's own capacity.
  void Credit(const Host& host, const HostGrant& grant, int32_t slots_taken, bool now_idle);
  void CreditShared(const ResourceAmount& amount) { free_shared_[amount.id] += amount.amount; }

  // Commits a nominated allocation for the rest of the cycle.
  // REQUIRES: every grant and shared amount fits.
  void Debit(const Allocation& allocation);

 private:
  enum UndoKind : uint8_t {
    kUndoHost,    // slots (amount 0) or a host resource
    kUndoShared,  // a shared resource
    kUndoGpus,    // GPUs: `amount` holds the host's free mask before the claim
    kUndoGpuMem,  // shared GPUs: `amount` of memory claimed on device `slots`
  };
  struct Undo {
    UndoKind kind = kUndoHost;
    uint32_t index = 0;  // host, or shared resource id
    int32_t slots = 0;
    ResourceId resource = 0;
    int64_t amount = 0;
  };

  // Written field by field into the log's own slot: a pushed Undo temporary was stored
  // field by field and read back whole, a stall at every claim (~2.5 % of a trace replay).
  void LogUndo(UndoKind kind, uint32_t index, int32_t slots, ResourceId resource,
               int64_t amount) {
    Undo& undo = undo_.emplace_back();
    undo.kind = kind;
    undo.index = index;
    undo.slots = slots;
    undo.resource = resource;
    undo.amount = amount;
  }
  void FillDefines(const ClusterState& state) const;
  // Host h's free GPUs become `mask`, its entry in the buckets (when built) following.
  void SetFreeGpus(HostIndex h, uint64_t mask);
  void IndexGpuBuckets();
  // Builds total_free_ and has_free_ from free_slots_.
  void IndexFreeHosts();
  void NoteFree(HostIndex host) {
    const uint64_t bit = uint64_t{1} << (host % 64);
    if (free_slots_[host] > 0) {
      has_free_[host / 64] |= bit;
    } else {
      has_free_[host / 64] &= ~bit;
    }
  }
  // A claim; logged for Rollback() unless committed.
  template <bool kLogged>
  void TakeHost(const HostGrant& grant);
  template <bool kLogged>
  void TakeShared(const ResourceAmount& amount);
  // Adds `mem_mb` (negative: gives back) to the memory claimed on each of `gpus` of host h.
  template <bool kLogged>
  void ClaimGpuMemory(HostIndex h, uint64_t gpus, int64_t mem_mb);

  std::vector<int32_t> free_slots_;
  std::vector<int32_t> total_slots_;
  uint64_t totals_version_ = 0;  // HostSlots::totals_version of total_slots_; 0: not a copy
  std::vector<uint8_t> accepts_work_;
  std::vector<uint8_t> idle_;
  std::vector<int64_t> free_resources_;
  std::vector<int64_t> free_shared_;
  size_t resource_count_ = 0;
  int64_t total_free_ = 0;
  HostIndex first_free_ = 0;
  std::vector<uint64_t> has_free_;   // bit h % 64 of word h / 64: free_slots_[h] > 0
  std::vector<uint64_t> gpu_free_;    // by host; empty on a cluster without GPUs
  // gpu_buckets_[c]: bit h set when host h has exactly c free GPUs; empty until used.
  std::vector<std::vector<uint64_t>> gpu_buckets_;
  std::vector<int32_t> gpu_bucket_sizes_;  // hosts in each bucket
  // Shared mode: device memory this cycle's shared claims reserve (credits: give back), by
  // host and device index; only hosts with such claims have an entry.
  std::map<HostIndex, std::vector<int64_t>> gpu_mem_claimed_;
  bool all_configured_ = false;  // AllConfigured: running jobs hold nothing
  std::vector<JobId> withheld_for_;  // empty until a gate withholds a host
  Instant withheld_since_ = 0;
  const ReservationBook* book_ = nullptr;  // null: no reservations (or not set this cycle)
  Instant reservation_now_ = 0;
  std::vector<Instant> reserved_from_;  // by host: ReservationBook::ReservedFrom at now
  std::map<uint32_t, HostIndex> select_cursors_;  // few entries; order is irrelevant
  std::vector<Undo> undo_;
  // Logically const: caches of the state's configuration, invisible to results.
  mutable int32_t max_host_slots_ = -1;   // MaxHostSlots(); -1 until used
  mutable std::vector<uint8_t> defines_;  // host x resource, row-major; empty until used
  mutable std::map<std::string, std::vector<const std::string*>, std::less<>> attribute_columns_;
  mutable std::map<std::pair<std::string, int64_t>, std::vector<uint64_t>> gpu_match_columns_;
};

}  // namespace sluice::core
