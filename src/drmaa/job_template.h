// JobTemplate: what drmaa_allocate_job_template hands out, the attributes a caller set (the
// C type drmaa_job_template_t wraps one, c_types.h).
//
// Representation: TemplateValues (attributes.h), only attributes set to a non-empty value;
// setting "" (or an empty vector) unsets. Every value passed its set-time check (CheckScalar,
// CheckVector) when it was stored, so a template never holds a value Sluice refuses alone.
// Thread-safety: its own mutex (LockRank::kDrmaaTemplate), taken only to read or change the
// values; Values() copies them out so that submission holds no template lock.
// Implements R-COMPAT-4 (job templates).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "drmaa/attributes.h"
#include "drmaa/error.h"

namespace sluice::drmaa {

class JobTemplate {
 public:
  JobTemplate() = default;
  JobTemplate(const JobTemplate&) = delete;
  JobTemplate& operator=(const JobTemplate&) = delete;

  // `now` (epoch seconds) checks start times and native specifications' begin times.
  Error Set(std::string_view name, std::string_view value, int64_t now);
  Error SetVector(std::string_view name, std::vector<std::string> values);
  // An attribute's value ("" when unset). Errors: DRMAA_ERRNO_INVALID_ARGUMENT for a name
  // that is not a scalar attribute of the standard.
  Expected<std::string> Get(std::string_view name) const;
  Expected<std::vector<std::string>> GetVector(std::string_view name) const;

  TemplateValues Values() const;

 private:
  mutable Mutex mu_{LockRank::kDrmaaTemplate};
  TemplateValues values_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace sluice::drmaa
