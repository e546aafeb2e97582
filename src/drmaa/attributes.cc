#include "drmaa/attributes.h"

#include "drmaa/drmaa.h"
#include "drmaa/native_spec.h"
#include "drmaa/placeholders.h"
#include "drmaa/time_values.h"

namespace sluice::drmaa {
namespace {

constexpr std::string_view kNoLimitsBut =
    "Sluice has one run limit, the hard wall-clock limit (drmaa_wct_hlimit)";

constexpr AttributeSpec kAttributes[] = {
    {DRMAA_REMOTE_COMMAND, false, true, ""},
    {DRMAA_JS_STATE, false, true, ""},
    {DRMAA_WD, false, true, ""},
    {DRMAA_JOB_CATEGORY, false, true, ""},
    {DRMAA_NATIVE_SPECIFICATION, false, true, ""},
    {DRMAA_BLOCK_EMAIL, false, true, ""},
    {DRMAA_START_TIME, false, true, ""},
    {DRMAA_JOB_NAME, false, true, ""},
    {DRMAA_INPUT_PATH, false, true, ""},
    {DRMAA_OUTPUT_PATH, false, true, ""},
    {DRMAA_ERROR_PATH, false, true, ""},
    {DRMAA_JOIN_FILES, false, true, ""},
    {DRMAA_WCT_HLIMIT, false, true, ""},
    {DRMAA_TRANSFER_FILES, false, false,
     "Sluice transfers no files: the hosts share the file system the paths name"},
    {DRMAA_DEADLINE_TIME, false, false, "Sluice has no deadline after which a job is dropped"},
    {DRMAA_WCT_SLIMIT, false, false, kNoLimitsBut},
    {DRMAA_DURATION_HLIMIT, false, false, kNoLimitsBut},
    {DRMAA_DURATION_SLIMIT, false, false, kNoLimitsBut},
    {DRMAA_V_ARGV, true, true, ""},
    {DRMAA_V_ENV, true, true, ""},
    {DRMAA_V_EMAIL, true, true, ""},
};

Error OneOf(std::string_view name, std::string_view value, std::string_view a,
            std::string_view b, int code) {
  if (value == a || value == b) return Error::None();
  return Error(code, std::string(name) + ": expected \"" + std::string(a) + "\" or \"" +
                         std::string(b) + "\", got \"" + std::string(value) + "\"");
}

// A path attribute: `[hostname]:path` with placeholders that are known at submission.
Error CheckPath(std::string_view name, std::string_view value) {
  Expected<std::string> path = PathOf(value, name);
  if (!path) return path.error();
  if (name == DRMAA_INPUT_PATH && *path != "/dev/null") {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                 std::string(name) + ": Sluice jobs read no standard input (it is /dev/null); "
                 "expected ':/dev/null' or no value, got \"" + std::string(value) + "\"");
  }
  return Error::None();
}

}  // namespace

std::string_view TemplateValues::Scalar(std::string_view name) const {
  auto it = scalars.find(name);
  return it == scalars.end() ? std::string_view() : std::string_view(it->second);
}

const AttributeSpec* FindAttribute(std::string_view name) {
  for (const AttributeSpec& spec : kAttributes) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::vector<std::string> SupportedAttributeNames(bool vector) {
  std::vector<std::string> names;
  for (const AttributeSpec& spec : kAttributes) {
    if (spec.supported && spec.vector == vector) names.emplace_back(spec.name);
  }
  return names;
}

Error CheckScalar(std::string_view name, std::string_view value, int64_t now) {
  const AttributeSpec* spec = FindAttribute(name);
  if (spec == nullptr) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                 "'" + std::string(name) + "' is not a DRMAA attribute "
                 "(drmaa_get_attribute_names lists those Sluice supports)");
  }
  if (spec->vector) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                 std::string(name) + " is a vector attribute: set it with "
                                     "drmaa_set_vector_attribute");
  }
  if (value.empty()) return Error::None();
  if (!spec->supported) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT, std::string(name) + " is not supported: " +
                                                   std::string(spec->unsupported_because));
  }
  if (name == DRMAA_JS_STATE) {
    return OneOf(name, value, DRMAA_SUBMISSION_STATE_ACTIVE, DRMAA_SUBMISSION_STATE_HOLD,
                 DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
  }
  if (name == DRMAA_JOIN_FILES) {
    return OneOf(name, value, "y", "n", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT);
  }
  if (name == DRMAA_BLOCK_EMAIL) {
    return OneOf(name, value, "0", "1", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT);
  }
  if (name == DRMAA_START_TIME) {
    Expected<int64_t> begin = ParseStartTime(value, now);
    return begin ? Error::None() : begin.error();
  }
  if (name == DRMAA_WCT_HLIMIT) {
    Expected<int64_t> limit = ParseTimeAmount(value, name);
    return limit ? Error::None() : limit.error();
  }
  if (name == DRMAA_INPUT_PATH || name == DRMAA_OUTPUT_PATH || name == DRMAA_ERROR_PATH) {
    return CheckPath(name, value);
  }
  if (name == DRMAA_WD && value.find(DRMAA_PLACEHOLDER_WD) != std::string_view::npos) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                 std::string(name) + ": " DRMAA_PLACEHOLDER_WD
                                     " is the working directory itself: it cannot name it");
  }
  if (name == DRMAA_NATIVE_SPECIFICATION) {
    Expected<client::SubmitFlags> flags = ReadNativeSpecification(value, now);
    return flags ? Error::None() : flags.error();
  }
  return Error::None();
}

Error CheckVector(std::string_view name, const std::vector<std::string>& values) {
  const AttributeSpec* spec = FindAttribute(name);
  if (spec == nullptr || !spec->vector) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                 "'" + std::string(name) + "' is not a vector attribute "
                 "(drmaa_get_vector_attribute_names lists them)");
  }
  if (name == DRMAA_V_EMAIL && !values.empty()) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                 std::string(name) + ": Sluice sends no e-mail; expected an empty list");
  }
  if (name == DRMAA_V_ENV) {
    for (const std::string& entry : values) {
      const size_t eq = entry.find('=');
      if (eq == 0 || eq == std::string::npos) {
        return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                     std::string(name) + ": expected NAME=VALUE, got \"" + entry + "\"");
      }
    }
  }
  return Error::None();
}

}  // namespace sluice::drmaa
