// UiSessions: dashboard sessions for sites without tokens (issue 47.8). A user who
// authenticated some other way (MUNGE, for `sluice ui-login`) gets a bearer token that names
// them and an expiry, "ui.<expires>.<HMAC-SHA-256 hex>.<user>", under the key the job
// credentials use (job_credential.h: random, kept in the store's settings), so a restarted or
// failed-over controller accepts it until it expires. It cannot be revoked before then: keep
// its lifetime short (default 12 h).
// Thread-safety: all methods may be called concurrently (SetKey may come with a takeover).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "base/status.h"

namespace sluice::server {

class UiSessions {
 public:
  static constexpr std::string_view kPrefix = "ui.";
  static constexpr int64_t kDefaultTtlSeconds = 12 * 3600;
  static constexpr int64_t kMaxTtlSeconds = 7 * 24 * 3600;

  void SetKey(std::string key);
  // A token for `user` valid until `expires` (Unix seconds). kUnavailable before SetKey.
  Result<std::string> Issue(const std::string& user, int64_t expires) const;
  // The user a token names when its MAC is right and it has not expired at `now`;
  // kUnauthenticated otherwise.
  Result<std::string> Verify(std::string_view token, int64_t now) const;

 private:
  mutable Mutex mu_{LockRank::kAuth};
  std::string key_;  // guarded by mu_
};

}  // namespace sluice::server
