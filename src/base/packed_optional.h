// PackedOptional<T>: an optional number in the size of the number (issue 45: std::optional of an
// 8-byte number takes 16), for the job record's rarely set fields; one value of T stands for
// "none" and cannot be held. It reads and writes as std::optional<T> does where the record's
// users need it (has_value, *, value_or, assignment from T, std::optional<T> or nullopt, and
// conversion to std::optional<T> for the stored row and the API).
// Invariants: holds kNone exactly when empty (int64_t: its minimum, never a time or a count
// here; double: one NaN bit pattern, never a measured usage).
// Thread-safety: a plain value.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

namespace sluice {

template <typename T>
class PackedOptional {
  static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, double>,
                "PackedOptional holds int64_t or double");
  using Bits = std::conditional_t<std::is_same_v<T, double>, uint64_t, T>;
  static constexpr Bits kNone = std::is_same_v<T, double>
                                    ? Bits{0x7ff8dead00000000ULL}  // a quiet NaN's pattern
                                    : static_cast<Bits>(std::numeric_limits<int64_t>::min());

 public:
  PackedOptional() = default;
  PackedOptional(std::nullopt_t) {}                  // NOLINT: as std::optional
  PackedOptional(T value) : bits_(ToBits(value)) {}  // NOLINT: as std::optional
  PackedOptional(const std::optional<T>& value) {    // NOLINT: as std::optional
    if (value) bits_ = ToBits(*value);
  }

  bool has_value() const { return bits_ != kNone; }
  explicit operator bool() const { return has_value(); }
  T operator*() const { return FromBits(bits_); }
  T value_or(T fallback) const { return has_value() ? **this : fallback; }
  void reset() { bits_ = kNone; }
  operator std::optional<T>() const {  // NOLINT: reads as std::optional
    return has_value() ? std::optional<T>(**this) : std::nullopt;
  }

  friend bool operator==(const PackedOptional& a, const PackedOptional& b) {
    return a.bits_ == b.bits_;
  }

 private:
  static Bits ToBits(T value) {
    if constexpr (std::is_same_v<T, double>) {
      return std::bit_cast<Bits>(value);
    } else {
      return value;
    }
  }
  static T FromBits(Bits bits) {
    if constexpr (std::is_same_v<T, double>) {
      return std::bit_cast<T>(bits);
    } else {
      return bits;
    }
  }

  Bits bits_ = kNone;
};

}  // namespace sluice
