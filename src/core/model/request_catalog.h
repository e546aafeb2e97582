// RequestCatalog: every resource request a cluster's jobs use, compiled once, with the memos
// that make evaluating them cheap. One of ClusterState's parts (cluster_state.h); ClusterState
// owns it, keeps it told of the topology, and hands it out read-only.
//
// Representation:
//  - expr_pool_: the pool of every select expression of every request (R-RR-4), held by
//    pointer so moving the catalog never moves the expressions requests point into.
//  - requests_: compiled requests by their text (interned: the same text, the same object).
//  - select_memo_: per select expression, its verdict on each host when that verdict depends
//    only on the host's configuration (R-RR-4: evaluated once, not per job).
//  - feasibility_memo_: static feasibility verdicts (R-ADM-1) by request, queue and shape.
//  - A copy of the topology's host resource names, shared resource names and host count,
//    which compilation and the memos read (ResetHosts, ResetSharedResources).
// Invariants: a memoized verdict is one a fresh evaluation would give: the select memo is
// dropped whenever a host is added or changed, the feasibility memo whenever a host, a
// resource or a queue changes (the Reset* calls). The memos are invisible to results, hence
// mutable behind const methods (logically const).
// Thread-safety: none; owned by ClusterState.
// Implements R-RR-4 (select evaluated once per host), the memo side of R-ADM-1.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/ids.h"
#include "base/status.h"
#include "core/model/config.h"
#include "core/resreq/eval.h"
#include "core/resreq/expr.h"
#include "core/resreq/request.h"
#include "core/resreq/validate.h"

namespace sluice::core {

// The resource names requests may use on a cluster of `config` (resreq::Validate's catalog),
// for checks against a configuration before there is a state (the YAML loader, `sluice
// resreq`): host resources are the union of every host's `resources` keys.
resreq::ResourceCatalog ResourceCatalogOf(const ClusterConfig& config);

class RequestCatalog {
 public:
  RequestCatalog() = default;
  RequestCatalog(RequestCatalog&&) = default;
  RequestCatalog& operator=(RequestCatalog&&) = default;
  // Copies would share requests; Clone() is the deep copy.
  RequestCatalog(const RequestCatalog&) = delete;
  RequestCatalog& operator=(const RequestCatalog&) = delete;

  // Old request -> its copy, from Clone(), for re-linking jobs.
  using Relink = std::unordered_map<const resreq::Request*, const resreq::Request*>;
  // An independent deep copy: its own pool (same ExprIds) and requests; memos start empty.
  // Fills `relink` with where each request went.
  RequestCatalog Clone(Relink& relink) const;

  // --- Compilation. ---

  const resreq::ExprPool& expr_pool() const { return *expr_pool_; }
  // Parses and checks a request against the resources last given (ResetHosts,
  // ResetSharedResources), interning it: the same text always yields the same Request object.
  // Errors: kInvalidArgument with the column (parse) or the offending name (validation).
  Result<const resreq::Request*> Compile(const std::string& text);
  size_t request_count() const { return requests_.size(); }

  // --- Select memo. ---

  // Whether `host` passes `select`, evaluated through `view` (which must show that host).
  // A verdict that read no free amount on that host depends only on the host's
  // configuration, so it is memoized per (expression, host) until ResetHosts; `type==gpu` on
  // a host whose `type` is text is one (eval.h).
  bool PassesSelect(resreq::ExprId select, HostIndex host, const resreq::HostView& view) const {
    return select == resreq::kNoExpr || PassesSelectSlow(select, host, view);
  }
  // The memoized verdicts of a select, by host: kSelectUnknown (not evaluated yet),
  // kSelectPasses, kSelectFails, or kSelectReadsFree (depends on the host's free amounts:
  // evaluate it each time). PassesSelect fills them in. nullptr for kNoExpr. Valid until
  // ResetHosts; lets a host scan read one byte per host.
  static constexpr uint8_t kSelectUnknown = 0;
  static constexpr uint8_t kSelectPasses = 1;
  static constexpr uint8_t kSelectFails = 2;
  static constexpr uint8_t kSelectReadsFree = 3;
  const uint8_t* SelectVerdicts(resreq::ExprId select) const;
  // True when `select`'s verdict depends only on host configuration (no free amounts).
  bool SelectIsStatic(resreq::ExprId select) const;
  // True when `select` tests a free amount as a value: a consumable name that is not merely
  // the word on one side of a comparison with another name (`type==gpu` names the `gpu`
  // resource but tests the word). Static feasibility lets such a select pass every host.
  bool SelectTestsFreeAmounts(resreq::ExprId select) const;

  // --- Feasibility memo (R-ADM-1): verdicts that depend only on the request, the queue and
  // the configured topology. The cycle fills it. ---

  struct FeasibilityKey {
    const resreq::Request* request = nullptr;
    QueueIndex queue = 0;
    bool exclusive = false;
    int32_t min_tasks = 0;
    int32_t max_tasks = 0;
    friend auto operator<=>(const FeasibilityKey&, const FeasibilityKey&) = default;
  };
  struct FeasibilityVerdict {
    bool ok = true;
    std::string why;
  };
  std::map<FeasibilityKey, FeasibilityVerdict>& feasibility_memo() const {
    return feasibility_memo_;
  }

  // --- What the topology tells it (ClusterState only). ---

  // Hosts were added or changed: takes the host resource names and host count, drops both
  // memos.
  void ResetHosts(const std::vector<std::string>& host_resources, size_t host_count);
  // Shared resources changed: takes their names, drops the feasibility memo.
  void ResetSharedResources(const std::vector<std::string>& shared_resources);
  // A queue was added or changed: drops the feasibility memo.
  void ResetQueues() { feasibility_memo_.clear(); }

 private:
  struct SelectMemo {
    bool reads_free_amounts = false;
    bool tests_free_amounts = false;
    std::vector<uint8_t> verdicts;  // by host: kSelectUnknown, ...
  };
  bool PassesSelectSlow(resreq::ExprId select, HostIndex host, const resreq::HostView& view) const;
  // The memo entry of a select (created on first use). REQUIRES: select != kNoExpr.
  SelectMemo& MemoOf(resreq::ExprId select) const;
  bool IsHostResource(std::string_view name) const;
  bool TestsFreeAmounts(resreq::ExprId id) const;

  std::unique_ptr<resreq::ExprPool> expr_pool_ = std::make_unique<resreq::ExprPool>();
  std::unordered_map<std::string, std::unique_ptr<resreq::Request>> requests_;  // by text
  mutable std::unordered_map<resreq::ExprId, SelectMemo> select_memo_;          // never iterated
  mutable std::map<FeasibilityKey, FeasibilityVerdict> feasibility_memo_;
  std::vector<std::string> host_resources_;
  std::vector<std::string> shared_resources_;
  size_t host_count_ = 0;
};

}  // namespace sluice::core
