// The job template attributes of DRMAA 1.0 on Sluice: which exist, which Sluice supports, and
// the checks a value passes when it is set (drmaa_set_attribute, drmaa_set_vector_attribute).
// docs/drmaa.md has the table of what each maps to.
//
// Every attribute the standard names is in the table. The mandatory ones are all supported
// (listed by drmaa_get_attribute_names / drmaa_get_vector_attribute_names), though some
// refuse values Sluice cannot honour: an input path other than /dev/null, e-mail addresses.
// Of the optional ones Sluice supports drmaa_wct_hlimit (the run limit); the others
// (drmaa_transfer_files, drmaa_deadline_time, drmaa_wct_slimit, drmaa_duration_hlimit,
// drmaa_duration_slimit) are not listed and setting them is DRMAA_ERRNO_INVALID_ARGUMENT, as
// is a name the standard does not have, unless the value is empty (which sets nothing).
// Set-time checks are those of one value alone (its format, a value Sluice refuses); what
// depends on several attributes or on the submission is checked by BuildSubmission.
// Thread-safety: pure functions over a constant table.
// Implements R-COMPAT-4 (job template attributes).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "drmaa/error.h"

namespace sluice::drmaa {

// The values a job template holds: only the attributes that were set to a non-empty value.
struct TemplateValues {
  std::map<std::string, std::string, std::less<>> scalars;
  std::map<std::string, std::vector<std::string>, std::less<>> vectors;

  // The scalar `name`, or "" when unset.
  std::string_view Scalar(std::string_view name) const;
};

struct AttributeSpec {
  std::string_view name;
  bool vector = false;
  bool supported = false;
  std::string_view unsupported_because;  // when !supported
};

// The standard's attribute `name`, or null for a name it does not have.
const AttributeSpec* FindAttribute(std::string_view name);

// The supported scalar (vector == false) or vector attribute names, in the table's order.
std::vector<std::string> SupportedAttributeNames(bool vector);

// Checks `value` for the scalar attribute `name` at `now` (epoch seconds; native
// specifications read begin times against it). An empty value is always accepted: it unsets.
Error CheckScalar(std::string_view name, std::string_view value, int64_t now);

// Checks `values` for the vector attribute `name`.
Error CheckVector(std::string_view name, const std::vector<std::string>& values);

}  // namespace sluice::drmaa
