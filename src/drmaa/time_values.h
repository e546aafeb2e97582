// DRMAA 1.0's two time formats, read into what the Sluice API takes (docs/drmaa.md):
//   drmaa_start_time   [[[[CC]YY/]MM/]DD] hh:mm[:ss] [{-|+}UU:uu]  ->  `begin`, epoch seconds
//                      Date fields left out are today's; without a zone the time is local,
//                      with one it is that offset from UTC. A time in the past means now.
//   drmaa_wct_hlimit   [[h:]m:]s  (any number of digits per field)  ->  `run_limit`, seconds
// Errors: DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT naming the attribute and the expected form;
// DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE for a zero run limit or a date that does not exist.
// Pure functions: the current time is passed in; local time uses the process's time zone.
// Implements R-COMPAT-4 (drmaa_start_time, drmaa_wct_hlimit).
#pragma once

#include <cstdint>
#include <string_view>

#include "drmaa/error.h"

namespace sluice::drmaa {

// `now` is seconds since the epoch.
Expected<int64_t> ParseStartTime(std::string_view text, int64_t now);

Expected<int64_t> ParseTimeAmount(std::string_view text, std::string_view attribute);

}  // namespace sluice::drmaa
