// DRMAA's path syntax and placeholders, turned into the paths a Sluice submission carries.
//
//   [hostname]:path     drmaa_input_path, drmaa_output_path, drmaa_error_path. Sluice writes a
//                       job's files on the host that runs it, through the file system the
//                       hosts share, so only an empty hostname (`:path`) or none (`path`) is
//                       taken; a hostname is refused (DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE).
//   $drmaa_hd_ph$       the submitting user's home directory
//   $drmaa_wd_ph$       the job's working directory (not in drmaa_wd itself)
//   $drmaa_incr_ph$     a bulk job's index: Sluice's `%a`, which the controller replaces per
//                       element (docs/api.md "Job arrays"); refused outside a bulk job, and in
//                       drmaa_wd (the elements of an array share one working directory)
// Placeholders may stand anywhere in the value. A `%` followed by j, J, A, a or I is Sluice's
// own pattern and stays for the controller to replace.
// Errors: DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE naming the attribute and what was expected.
// Pure functions. Implements R-COMPAT-4 (placeholders, path syntax).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "drmaa/error.h"

namespace sluice::drmaa {

struct PlaceholderValues {
  std::string home;
  std::optional<std::string> wd;     // unset: $drmaa_wd_ph$ is refused (drmaa_wd itself)
  std::optional<std::string> index;  // unset: not a bulk job, $drmaa_incr_ph$ is refused
};

Expected<std::string> ExpandPlaceholders(std::string_view text, std::string_view attribute,
                                         const PlaceholderValues& values);

// The path of `[hostname]:path` (or of a plain path).
Expected<std::string> PathOf(std::string_view value, std::string_view attribute);

}  // namespace sluice::drmaa
