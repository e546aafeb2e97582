// drmaa_native_specification: the flags of `sluice submit` (`-n 4 -q short -R "span[hosts=1]"
// -W 30m`), read by the client's one parser of them outside CLI11, the one job scripts'
// `#SLUICE` lines use (client/directives.h, ParseSubmitFlags). Arrays (`--array`, `-J
// name[1-5]`) are refused: drmaa_run_bulk_jobs makes them.
// Errors: DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE with the parser's message, which names the flag
// and what it expects.
// Pure (the clock is passed in). Implements R-COMPAT-4 (native specification).
#pragma once

#include <cstdint>
#include <string_view>

#include "client/submit_request.h"
#include "drmaa/error.h"

namespace sluice::drmaa {

// `now` is epoch seconds (for -b's relative forms).
Expected<client::SubmitFlags> ReadNativeSpecification(std::string_view text, int64_t now);

}  // namespace sluice::drmaa
