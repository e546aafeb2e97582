// CapacityHostView: one host as select[] and order[] expressions see it during a cycle —
// its configured attributes, tags and totals, and its free amounts in a Capacity.
//
// Bind() switches the host cheaply, so one view serves a whole host scan. Free amounts come
// from the Capacity (nothing on hosts that do not accept work). Implements resreq::HostView.
#pragma once

#include <optional>
#include <string_view>

#include "core/alloc/capacity.h"
#include "core/model/cluster_state.h"
#include "core/resreq/eval.h"

namespace sluice::core {

class CapacityHostView final : public resreq::HostView {
 public:
  CapacityHostView(const ClusterState& state, const Capacity& capacity)
      : state_(state), capacity_(capacity) {}

  void Bind(HostIndex host) { host_ = &state_.hosts()[host]; }


  std::optional<std::string_view> Attribute(std::string_view name) const override;
  bool HasTag(std::string_view name) const override;
  std::optional<double> Free(std::string_view name) const override;
  std::optional<double> Total(std::string_view name) const override;

 private:
  // The host's id for a resource it defines, or nullopt.
  std::optional<ResourceId> HostResource(std::string_view name) const;

  const ClusterState& state_;
  const Capacity& capacity_;
  const Host* host_ = nullptr;
};

}  // namespace sluice::core
