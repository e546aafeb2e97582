#include "core/alloc/host_view.h"

#include <algorithm>
#include <string>

namespace sluice::core {

std::optional<std::string_view> CapacityHostView::Attribute(std::string_view name) const {
  auto it = host_->spec.attributes.find(std::string(name));
  if (it == host_->spec.attributes.end()) return std::nullopt;
  return std::string_view(it->second);
}

bool CapacityHostView::HasTag(std::string_view name) const {
  const auto& tags = host_->spec.tags;
  return std::find(tags.begin(), tags.end(), name) != tags.end();
}

std::optional<ResourceId> CapacityHostView::HostResource(std::string_view name) const {
  if (!host_->spec.resources.contains(std::string(name))) return std::nullopt;
  return state_.FindHostResource(name);
}

std::optional<double> CapacityHostView::Free(std::string_view name) const {
  if (name == "slots") return capacity_.FreeSlots(host_->index);
  auto id = HostResource(name);
  if (!id) return std::nullopt;
  return static_cast<double>(capacity_.FreeResource(host_->index, *id));
}

std::optional<double> CapacityHostView::Total(std::string_view name) const {
  if (name == "slots") return host_->spec.slots;
  auto id = HostResource(name);
  if (!id) return std::nullopt;
  return static_cast<double>(host_->ResourceTotal(*id));
}

}  // namespace sluice::core
