#include "drmaa/placeholders.h"

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

struct Placeholder {
  std::string_view text;
  const std::optional<std::string>* value;  // null: always known (the home directory)
  std::string_view unavailable;             // why it cannot stand here, when its value is unset
};

}  // namespace

Expected<std::string> ExpandPlaceholders(std::string_view text, std::string_view attribute,
                                         const PlaceholderValues& values) {
  const Placeholder placeholders[] = {
      {DRMAA_PLACEHOLDER_HD, nullptr, ""},
      {DRMAA_PLACEHOLDER_WD, &values.wd, "is the working directory itself: it cannot name it"},
      {DRMAA_PLACEHOLDER_INCR, &values.index,
       "stands only in the paths of a bulk job (drmaa_run_bulk_jobs): the elements of a Sluice "
       "array share one working directory, and a single job has no index"},
  };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const Placeholder* found = nullptr;
    for (const Placeholder& p : placeholders) {
      if (text.substr(i).starts_with(p.text)) found = &p;
    }
    if (found == nullptr) {
      out += text[i++];
      continue;
    }
    if (found->value != nullptr && !found->value->has_value()) {
      return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, std::string(attribute) + ": " +
                                                            std::string(found->text) + " " +
                                                            std::string(found->unavailable));
    }
    out += found->value != nullptr ? **found->value : values.home;
    i += found->text.size();
  }
  return out;
}

Expected<std::string> PathOf(std::string_view value, std::string_view attribute) {
  const size_t colon = value.find(':');
  const size_t slash = value.find('/');
  // `host:path` has its colon before any slash; `/a:b` is a path with a colon in it.
  if (colon == std::string_view::npos || (slash != std::string_view::npos && slash < colon)) {
    return std::string(value);
  }
  if (colon != 0) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                 std::string(attribute) + ": host '" + std::string(value.substr(0, colon)) +
                     "': expected ':PATH' (Sluice writes a job's files on the host that runs "
                     "it, through the file system the hosts share; it transfers no files)");
  }
  return std::string(value.substr(1));
}

}  // namespace sluice::drmaa
