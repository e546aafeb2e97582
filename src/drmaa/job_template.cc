#include "drmaa/job_template.h"

#include <mutex>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {

Error JobTemplate::Set(std::string_view name, std::string_view value, int64_t now) {
  SLUICE_DRMAA_RETURN_IF_ERROR(CheckScalar(name, value, now));
  std::lock_guard lock(mu_);
  if (value.empty()) {
    if (auto it = values_.scalars.find(name); it != values_.scalars.end()) {
      values_.scalars.erase(it);
    }
  } else {
    values_.scalars.insert_or_assign(std::string(name), std::string(value));
  }
  return Error::None();
}

Error JobTemplate::SetVector(std::string_view name, std::vector<std::string> values) {
  SLUICE_DRMAA_RETURN_IF_ERROR(CheckVector(name, values));
  std::lock_guard lock(mu_);
  if (values.empty()) {
    if (auto it = values_.vectors.find(name); it != values_.vectors.end()) {
      values_.vectors.erase(it);
    }
  } else {
    values_.vectors.insert_or_assign(std::string(name), std::move(values));
  }
  return Error::None();
}

Expected<std::string> JobTemplate::Get(std::string_view name) const {
  const AttributeSpec* spec = FindAttribute(name);
  if (spec == nullptr || spec->vector) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                 "'" + std::string(name) + "' is not a scalar DRMAA attribute "
                 "(drmaa_get_attribute_names lists them)");
  }
  std::lock_guard lock(mu_);
  return std::string(values_.Scalar(name));
}

Expected<std::vector<std::string>> JobTemplate::GetVector(std::string_view name) const {
  const AttributeSpec* spec = FindAttribute(name);
  if (spec == nullptr || !spec->vector) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                 "'" + std::string(name) + "' is not a vector DRMAA attribute "
                 "(drmaa_get_vector_attribute_names lists them)");
  }
  std::lock_guard lock(mu_);
  auto it = values_.vectors.find(name);
  return it == values_.vectors.end() ? std::vector<std::string>() : it->second;
}

TemplateValues JobTemplate::Values() const {
  std::lock_guard lock(mu_);
  return values_;
}

}  // namespace sluice::drmaa
