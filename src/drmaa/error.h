// How the DRMAA library reports failure: a DRMAA errno (drmaa.h) with its diagnosis, the text
// the C functions write into the caller's `error_diagnosis` buffer.
//
// Representation: `Error` is an errno and a sentence (code DRMAA_ERRNO_SUCCESS: no error);
// `Expected<T>` holds a value or a failed Error, with the API of base/status.h's Result<T>
// (and std::expected's). Diagnoses are lowercase sentences without a final period that say
// what was expected, e.g. `drmaa_join_files: expected "y" or "n", got "yes"`.
// ErrorFromStatus maps a REST call's Status (client/rest_client.h) to the errno a DRMAA
// caller acts on, by what the call was (`Call`). Thread-safety: value types and pure
// functions.
// Implements R-COMPAT-4 (DRMAA's error codes and messages).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/check.h"
#include "base/status.h"

namespace sluice::drmaa {

class [[nodiscard]] Error {
 public:
  Error() = default;
  Error(int code, std::string diagnosis) : code_(code), diagnosis_(std::move(diagnosis)) {}
  static Error None() { return Error(); }

  bool ok() const { return code_ == 0; }
  int code() const { return code_; }
  const std::string& diagnosis() const { return diagnosis_; }

 private:
  int code_ = 0;
  std::string diagnosis_;
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}        // NOLINT: implicit like std::expected
  Expected(Error error) : error_(std::move(error)) {  // NOLINT
    SLUICE_CHECK(!error_.ok());
  }

  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }
  // REQUIRES: has_value().
  T& operator*() & {
    SLUICE_CHECK(has_value());
    return *value_;
  }
  const T& operator*() const& {
    SLUICE_CHECK(has_value());
    return *value_;
  }
  T* operator->() { return &**this; }
  const T* operator->() const { return &**this; }
  // REQUIRES: !has_value().
  const Error& error() const {
    SLUICE_CHECK(!has_value());
    return error_;
  }

 private:
  std::optional<T> value_;
  Error error_;
};

// What a REST call was for: the same HTTP answer means different things to DRMAA (a 404 is
// an unknown job for a job call; a 400 is a refused job for a submission; a 409 is the
// inconsistent state of the control action tried).
enum class Call {
  kConnect,    // drmaa_init's first call
  kSubmit,     // run_job, run_bulk_jobs
  kJob,        // wait, job_ps, synchronize: reading one job
  kSuspend,    // control
  kResume,
  kHold,
  kRelease,
  kTerminate,
};

std::string_view ToString(Call call);

// The DRMAA errno and diagnosis of a failed REST call. REQUIRES: !status.ok().
Error ErrorFromStatus(const Status& status, Call call);

// drmaa_strerror's text of `code` (a static string; "unknown DRMAA error code" for an int
// that is not a DRMAA errno).
const char* ErrorText(int code);

// Writes `text` into a caller's buffer: nothing when `buffer` is null or `size` is 0, else at
// most size-1 bytes and a NUL (the diagnosis buffers, which may truncate).
void WriteTruncated(std::string_view text, char* buffer, size_t size);

// Writes `text` and a NUL into a caller's value buffer when it fits; else
// DRMAA_ERRNO_INVALID_ARGUMENT naming `what` and both sizes, and the buffer is left alone.
Error WriteValue(std::string_view text, char* buffer, size_t size, std::string_view what);

}  // namespace sluice::drmaa

// Returns early from a function returning Error or Expected<T> when `expr` failed.
#define SLUICE_DRMAA_RETURN_IF_ERROR(expr)                \
  do {                                                    \
    ::sluice::drmaa::Error sluice_drmaa_error_ = (expr); \
    if (!sluice_drmaa_error_.ok()) {                      \
      return sluice_drmaa_error_;                         \
    }                                                     \
  } while (false)
