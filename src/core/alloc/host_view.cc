#include "core/alloc/host_view.h"

#include <algorithm>
#include <string>

namespace sluice::core {

CapacityHostView::Name& CapacityHostView::Lookup(std::string_view name) const {
  for (size_t i = 0; i < name_count_; ++i) {
    if (names_[i].text.size() == name.size() &&
        (names_[i].text.data() == name.data() || names_[i].text == name)) {
      return names_[i];
    }
  }
  Name& entry = name_count_ < names_.size() ? names_[name_count_++] : overflow_;
  entry = Name{
      .text = name, .resource = state_.topology().FindHostResource(name), .attribute = nullptr};
  return entry;
}

std::optional<std::string_view> CapacityHostView::Attribute(std::string_view name) const {
  if (plain_) {
    auto it = host_->spec.attributes.find(std::string(name));
    if (it == host_->spec.attributes.end()) return std::nullopt;
    return std::string_view(it->second);
  }
  Name& entry = Lookup(name);
  if (entry.attribute == nullptr) entry.attribute = &capacity_.AttributeColumn(state_, name);
  const std::string* value = (*entry.attribute)[index_];
  if (value == nullptr) return std::nullopt;
  return std::string_view(*value);
}

bool CapacityHostView::HasTag(std::string_view name) const {
  const auto& tags = host_->spec.tags;
  return std::find(tags.begin(), tags.end(), name) != tags.end();
}

std::optional<ResourceId> CapacityHostView::HostResource(std::string_view name) const {
  if (plain_) {
    if (!host_->spec.resources.contains(std::string(name))) return std::nullopt;
    return state_.topology().FindHostResource(name);
  }
  const std::optional<ResourceId> id = Lookup(name).resource;
  if (!id || !capacity_.Defines(state_, index_, *id)) return std::nullopt;
  return id;
}

std::optional<double> CapacityHostView::Free(std::string_view name) const {
  if (name == "slots") return capacity_.FreeSlots(index_);
  auto id = HostResource(name);
  if (!id) return std::nullopt;
  return static_cast<double>(capacity_.FreeResource(index_, *id));
}

std::optional<double> CapacityHostView::Total(std::string_view name) const {
  if (name == "slots") return host_->spec.slots;
  auto id = HostResource(name);
  if (!id) return std::nullopt;
  return static_cast<double>(host_->ResourceTotal(*id));
}

}  // namespace sluice::core
