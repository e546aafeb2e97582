// What the C binding's opaque pointers (drmaa.h) point to: a job template, and the string
// vectors (attribute names, attribute values, job ids) the caller reads front to back with
// drmaa_get_next_* and frees with drmaa_release_*.
// Thread-safety: a template is safe to share (JobTemplate locks); a string vector belongs to
// the thread reading it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "drmaa/drmaa.h"
#include "drmaa/job_template.h"

namespace sluice::drmaa {

struct StringVector {
  std::vector<std::string> values;
  size_t next = 0;  // the next value drmaa_get_next_* returns
};

}  // namespace sluice::drmaa

struct drmaa_job_template_s {
  sluice::drmaa::JobTemplate impl;
};

struct drmaa_attr_names_s {
  sluice::drmaa::StringVector impl;
};

struct drmaa_attr_values_s {
  sluice::drmaa::StringVector impl;
};

struct drmaa_job_ids_s {
  sluice::drmaa::StringVector impl;
};
