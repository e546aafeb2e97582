// Outcome<T>: what a controller call answers (issue 38: outcomes, not HTTP, inside the
// controller). One of:
//  - a value;
//  - a failure: a Status whose code says what went wrong with the request or the controller
//    (base/status.h; kInvalidArgument, kNotFound, kUnavailable, ...);
//  - a Refusal: a well-formed request declined for a reason the client acts on, with a
//    machine-readable cause (below).
// Only the HTTP front end turns an Outcome into a status code and a body (http_reply.h,
// ReplyOf); the parts never see HTTP.
// Thread-safety: value types.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "base/check.h"
#include "base/status.h"

namespace sluice::server {

// Why a well-formed request was declined. Each kind has its body shape in docs/api.md.
enum class RefusalKind {
  kNeverRuns,    // a job no host or queue could ever run (R-UX-2, submission_refusal.h)
  kNotModified,  // a change that would make the job impossible (R-UX-7, job_changes.h)
  kOverQuota,    // the submission goes beyond a pending quota (issue 19, pending_quota.h)
  kKeyReused,    // an Idempotency-Key already used for a different submission (idempotency.h)
  kKeyInFlight,  // the key's first submission is still being stored: retry (idempotency.h)
};

std::string_view ToString(RefusalKind kind);

struct Refusal {
  RefusalKind kind = RefusalKind::kNeverRuns;
  std::string message;  // the whole sentence, for people ("job 7 not modified: ...")
  nlohmann::json cause;  // for programs (a reason object or a code string); null: none
};

template <typename T>
class [[nodiscard]] Outcome {
 public:
  Outcome(T value) : v_(std::move(value)) {}  // NOLINT: implicit, as Result<T>
  Outcome(Status failure) : v_(std::move(failure)) {  // NOLINT
    SLUICE_CHECK(!std::get<Status>(v_).ok());
  }
  Outcome(Refusal refusal) : v_(std::move(refusal)) {}  // NOLINT
  Outcome(Result<T> result)                              // NOLINT
      : v_(result ? std::variant<T, Status, Refusal>(std::move(*result))
                  : std::variant<T, Status, Refusal>(result.error())) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The failure, or null (a value or a refusal).
  const Status* failure() const { return std::get_if<Status>(&v_); }
  // The refusal, or null (a value or a failure).
  const Refusal* refusal() const { return std::get_if<Refusal>(&v_); }

 private:
  std::variant<T, Status, Refusal> v_;
};

}  // namespace sluice::server
