// Fingerprinter: a small, deterministic 64-bit hash for resource-request fingerprints (R-RR-4).
//
// Representation: FNV-1a over bytes, with a SplitMix64 finalizer so that nearby inputs spread
// over all 64 bits. Integers are fed as little-endian bytes and doubles as their IEEE-754 bit
// pattern (with -0.0 folded into 0.0), so a value is the same on every platform, compiler and
// run. It never uses std::hash (whose results are unspecified and may differ between builds).
// Strings are length-prefixed so that ("ab", "c") and ("a", "bc") differ.
// Invariant: Finish() depends only on the sequence of values fed, never on addresses.
// Thread-safety: a value type.
// Implements the hashing part of R-RR-4.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>

namespace sluice::core::resreq {

class Fingerprinter {
 public:
  Fingerprinter& Byte(uint8_t byte) {
    state_ = (state_ ^ byte) * kFnvPrime;
    return *this;
  }
  Fingerprinter& U64(uint64_t value) {
    for (int shift = 0; shift < 64; shift += 8) Byte(static_cast<uint8_t>(value >> shift));
    return *this;
  }
  Fingerprinter& I64(int64_t value) { return U64(static_cast<uint64_t>(value)); }
  Fingerprinter& Double(double value) {
    if (value == 0.0) value = 0.0;  // -0.0 and 0.0 compare equal, so they hash equal.
    return U64(std::bit_cast<uint64_t>(value));
  }
  Fingerprinter& Text(std::string_view text) {
    U64(text.size());
    for (char c : text) Byte(static_cast<uint8_t>(c));
    return *this;
  }

  // The SplitMix64 finalizer of the FNV state.
  uint64_t Finish() const {
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static constexpr uint64_t kFnvOffset = 14695981039346656037ULL;
  static constexpr uint64_t kFnvPrime = 1099511628211ULL;
  uint64_t state_ = kFnvOffset;
};

}  // namespace sluice::core::resreq
