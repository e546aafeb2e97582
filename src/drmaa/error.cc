#include "drmaa/error.h"

#include <algorithm>
#include <cstring>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

// The errno of a 409 for each control action (the job is in a state the action does not
// apply to); a terminate of a job that already ended names no job that can still end.
int ConflictErrno(Call call) {
  switch (call) {
    case Call::kSuspend:
      return DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE;
    case Call::kResume:
      return DRMAA_ERRNO_RESUME_INCONSISTENT_STATE;
    case Call::kHold:
      return DRMAA_ERRNO_HOLD_INCONSISTENT_STATE;
    case Call::kRelease:
      return DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE;
    case Call::kTerminate:
      return DRMAA_ERRNO_INVALID_JOB;
    case Call::kSubmit:
      return DRMAA_ERRNO_DENIED_BY_DRM;  // a closed queue
    case Call::kConnect:
      return DRMAA_ERRNO_DRMS_INIT_FAILED;
    case Call::kJob:
      break;
  }
  return DRMAA_ERRNO_INTERNAL_ERROR;
}

// The errno of a request the controller found wrong (400, 404, 422).
int RefusedErrno(Call call) {
  switch (call) {
    case Call::kSubmit:
      return DRMAA_ERRNO_DENIED_BY_DRM;
    case Call::kConnect:
      return DRMAA_ERRNO_DRMS_INIT_FAILED;
    default:
      return DRMAA_ERRNO_INVALID_JOB;
  }
}

int ErrnoOf(const Status& status, Call call) {
  switch (status.code()) {
    case StatusCode::kUnauthenticated:
    case StatusCode::kPermissionDenied:
      return DRMAA_ERRNO_AUTH_FAILURE;
    case StatusCode::kUnavailable:
      return call == Call::kConnect ? DRMAA_ERRNO_DRMS_INIT_FAILED
                                    : DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kOutOfRange:
      return RefusedErrno(call);
    case StatusCode::kFailedPrecondition:
      return ConflictErrno(call);
    case StatusCode::kResourceExhausted:  // a pending quota (429) or a body too large (413)
      return call == Call::kSubmit ? DRMAA_ERRNO_TRY_LATER : DRMAA_ERRNO_INTERNAL_ERROR;
    default:
      return DRMAA_ERRNO_INTERNAL_ERROR;
  }
}

}  // namespace

std::string_view ToString(Call call) {
  switch (call) {
    case Call::kConnect:
      return "connect";
    case Call::kSubmit:
      return "submit";
    case Call::kJob:
      return "job";
    case Call::kSuspend:
      return "suspend";
    case Call::kResume:
      return "resume";
    case Call::kHold:
      return "hold";
    case Call::kRelease:
      return "release";
    case Call::kTerminate:
      return "terminate";
  }
  return "?";
}

Error ErrorFromStatus(const Status& status, Call call) {
  SLUICE_CHECK(!status.ok());
  return Error(ErrnoOf(status, call), status.message());
}

const char* ErrorText(int code) {
  switch (code) {
    case DRMAA_ERRNO_SUCCESS:
      return "success";
    case DRMAA_ERRNO_INTERNAL_ERROR:
      return "internal error in the DRMAA library or the Sluice controller";
    case DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE:
      return "cannot reach the Sluice controller";
    case DRMAA_ERRNO_AUTH_FAILURE:
      return "the Sluice controller refused the credentials (SLUICE_TOKEN or MUNGE)";
    case DRMAA_ERRNO_INVALID_ARGUMENT:
      return "invalid argument";
    case DRMAA_ERRNO_NO_ACTIVE_SESSION:
      return "no active DRMAA session: call drmaa_init first";
    case DRMAA_ERRNO_NO_MEMORY:
      return "out of memory";
    case DRMAA_ERRNO_INVALID_CONTACT_STRING:
      return "invalid contact string: expected a Sluice controller URL list";
    case DRMAA_ERRNO_DEFAULT_CONTACT_STRING_ERROR:
      return "cannot use the default contact string (SLUICE_SERVER)";
    case DRMAA_ERRNO_NO_DEFAULT_CONTACT_STRING_SELECTED:
      return "no contact string given and SLUICE_SERVER is not set";
    case DRMAA_ERRNO_DRMS_INIT_FAILED:
      return "the session could not be opened with the Sluice controller";
    case DRMAA_ERRNO_ALREADY_ACTIVE_SESSION:
      return "a DRMAA session is already active in this process";
    case DRMAA_ERRNO_DRMS_EXIT_ERROR:
      return "the session could not be closed";
    case DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT:
      return "the attribute's value is not in the expected format";
    case DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE:
      return "the attribute's value is not one Sluice supports";
    case DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES:
      return "attribute values conflict with each other";
    case DRMAA_ERRNO_TRY_LATER:
      return "the Sluice controller cannot take the request now; try later";
    case DRMAA_ERRNO_DENIED_BY_DRM:
      return "the Sluice controller refused the job";
    case DRMAA_ERRNO_INVALID_JOB:
      return "no such job (unknown, another user's, or already reaped)";
    case DRMAA_ERRNO_RESUME_INCONSISTENT_STATE:
      return "the job cannot be resumed: Sluice never suspends jobs";
    case DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE:
      return "the job cannot be suspended: Sluice has no suspension";
    case DRMAA_ERRNO_HOLD_INCONSISTENT_STATE:
      return "the job cannot be held: only pending jobs can";
    case DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE:
      return "the job cannot be released: it is not held";
    case DRMAA_ERRNO_EXIT_TIMEOUT:
      return "timed out before the job ended";
    case DRMAA_ERRNO_NO_RUSAGE:
      return "no resource usage is known for the job";
    case DRMAA_ERRNO_NO_MORE_ELEMENTS:
      return "no more elements";
    default:
      return "unknown DRMAA error code";
  }
}

void WriteTruncated(std::string_view text, char* buffer, size_t size) {
  if (buffer == nullptr || size == 0) return;
  const size_t n = std::min(text.size(), size - 1);
  std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
}

Error WriteValue(std::string_view text, char* buffer, size_t size, std::string_view what) {
  if (buffer == nullptr) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT, std::string(what) + ": the buffer is NULL");
  }
  if (text.size() >= size) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                 std::string(what) + ": needs a buffer of " + std::to_string(text.size() + 1) +
                     " bytes, got " + std::to_string(size));
  }
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  return Error::None();
}

}  // namespace sluice::drmaa
