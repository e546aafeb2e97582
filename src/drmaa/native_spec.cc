#include "drmaa/native_spec.h"

#include <string>

#include "client/directives.h"
#include "drmaa/drmaa.h"

namespace sluice::drmaa {

Expected<client::SubmitFlags> ReadNativeSpecification(std::string_view text, int64_t now) {
  const std::string where = std::string(DRMAA_NATIVE_SPECIFICATION) + ":";
  Result<client::SubmitFlags> flags = client::ParseSubmitFlags(text, where, now);
  if (!flags) return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, flags.error().message());
  // `-J name[1-5]` is an array too (client::BuildSubmitBody splits it off the name).
  if (!flags->array.empty() || flags->name.find('[') != std::string::npos) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                 where + " an array is made by drmaa_run_bulk_jobs, not by --array or "
                         "-J NAME[INDEXES]");
  }
  return *flags;
}

}  // namespace sluice::drmaa
