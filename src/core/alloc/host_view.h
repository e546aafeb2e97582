// CapacityHostView: one host as select[] and order[] expressions see it during a cycle —
// its configured attributes, tags and totals, and its free amounts in a Capacity.
//
// Bind() switches the host cheaply, so one view serves a whole host scan. Free amounts come
// from the Capacity (nothing on hosts that do not accept work). Implements resreq::HostView.
// Speed (issue 8): a scan evaluates the same few names on every host, so the view remembers,
// per name, its resource id and the Capacity's attribute column; a lookup on a host is then
// an array read instead of a map search with string comparisons.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/alloc/capacity.h"
#include "core/model/cluster_state.h"
#include "core/resreq/eval.h"

namespace sluice::core {

class CapacityHostView final : public resreq::HostView {
 public:
  // `plain`: look every name up in the host's maps (the reference path of the differential
  // test), without the remembered names and attribute columns.
  CapacityHostView(const ClusterState& state, const Capacity& capacity, bool plain = false)
      : state_(state), capacity_(capacity), plain_(plain) {}

  void Bind(HostIndex host) {
    host_ = &state_.topology().hosts()[host];
    index_ = host;
  }

  std::optional<std::string_view> Attribute(std::string_view name) const override;
  bool HasTag(std::string_view name) const override;
  std::optional<double> Free(std::string_view name) const override;
  std::optional<double> Total(std::string_view name) const override;

 private:
  struct Name {
    std::string_view text;
    std::optional<ResourceId> resource;                          // a host resource's id
    const std::vector<const std::string*>* attribute = nullptr;  // on first use
  };
  // The remembered entry of `name` (a fresh one when the small table is full).
  Name& Lookup(std::string_view name) const;
  // The host's id for a resource it defines, or nullopt.
  std::optional<ResourceId> HostResource(std::string_view name) const;

  const ClusterState& state_;
  const Capacity& capacity_;
  const Host* host_ = nullptr;
  HostIndex index_ = 0;
  bool plain_ = false;
  mutable std::array<Name, 8> names_{};
  mutable size_t name_count_ = 0;
  mutable Name overflow_;
};

}  // namespace sluice::core
