// ReplayCache: the credentials a server has accepted, each remembered until it expires, so
// the same credential is accepted once (R-SEC-2). munged refuses replays too, but only those
// it decoded itself since it started; this cache makes the controller's answer independent of
// which munged decoded and of munged restarts.
//
// Representation: the key (a digest of the credential) -> its expiry, and an expiry-ordered
// index to forget expired keys first. Memory is bounded: at most `capacity` keys; when full
// of unexpired keys a new credential is refused as kUnavailable (never forgotten early,
// which would let a replay through).
// Time is an argument (seconds since the epoch): the class reads no clock.
// Thread-safety: none; the caller locks.
// Implements R-SEC-2 (replay refusal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"

namespace sluice::auth {

class ReplayCache {
 public:
  explicit ReplayCache(size_t capacity) : capacity_(capacity) {}

  // Accepts `key`, first seen at `now`, remembering it until `expires_at` (inclusive).
  // Errors: kUnauthenticated when `key` was accepted before and has not expired;
  // kUnauthenticated when `expires_at` < `now` (expired); kUnavailable when `capacity`
  // unexpired keys are remembered.
  Status Accept(std::string_view key, int64_t expires_at, int64_t now);

  size_t size() const { return expiry_.size(); }

 private:
  // Forgets the keys that expired before `now`.
  void ForgetExpired(int64_t now);

  size_t capacity_;
  std::unordered_map<std::string, int64_t> expiry_;  // key -> expires_at
  std::multimap<int64_t, std::string> by_expiry_;    // expires_at -> key
};

}  // namespace sluice::auth
