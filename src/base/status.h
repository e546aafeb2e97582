// Status and Result<T>: how boundary code (parsers, config, store, network) reports failure.
//
// Representation: a closed set of codes (a subset of the absl canonical codes) and a message.
// Messages are lowercase, have no final period and name the location, e.g.
// `cluster.yaml:12: queues[2].max_capacity: 140 > 100`. Tests compare codes, not text.
// Result<T> holds either a value or a non-OK Status; its API follows std::expected so that a
// later switch to C++23 is mechanical. Scheduling outcomes are never a Status: they are
// reasons (core/reasons). Thread-safety: value types, no shared state.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "base/check.h"

namespace sluice {

enum class StatusCode {
  kOk,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kOutOfRange,
  kResourceExhausted,
  kPermissionDenied,
  kUnauthenticated,
  kUnavailable,
  kInternal,
};

std::string_view ToString(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: cluster.yaml:3: ..." for logs and CLI output.
  std::string ToString() const;

  // Returns a copy whose message is `prefix: message`, for adding location context.
  Status WithPrefix(std::string_view prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
inline Status NotFound(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
inline Status FailedPrecondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}
inline Status Internal(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit like std::expected
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    SLUICE_CHECK(!status_.ok());
  }

  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }

  // REQUIRES: has_value().
  T& value() & {
    SLUICE_CHECK(has_value());
    return *value_;
  }
  const T& value() const& {
    SLUICE_CHECK(has_value());
    return *value_;
  }
  T&& value() && {
    SLUICE_CHECK(has_value());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // REQUIRES: !has_value().
  const Status& error() const {
    SLUICE_CHECK(!has_value());
    return status_;
  }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace sluice

// Returns early from a function returning Status or Result<T> when `expr` is not OK.
#define SLUICE_RETURN_IF_ERROR(expr)          \
  do {                                        \
    ::sluice::Status sluice_status_ = (expr); \
    if (!sluice_status_.ok()) {               \
      return sluice_status_;                  \
    }                                         \
  } while (false)
