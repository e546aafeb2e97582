#include "auth/replay_cache.h"

namespace sluice::auth {

Status ReplayCache::Accept(std::string_view key, int64_t expires_at, int64_t now) {
  if (expires_at < now) return Status(StatusCode::kUnauthenticated, "credential expired");
  ForgetExpired(now);
  if (expiry_.contains(std::string(key))) {
    return Status(StatusCode::kUnauthenticated, "credential replayed (already used)");
  }
  if (expiry_.size() >= capacity_) {
    return Status(StatusCode::kUnavailable, "too many credentials in flight (" +
                                                std::to_string(capacity_) +
                                                " unexpired): retry later");
  }
  expiry_.emplace(std::string(key), expires_at);
  by_expiry_.emplace(expires_at, std::string(key));
  return Status::Ok();
}

void ReplayCache::ForgetExpired(int64_t now) {
  auto end = by_expiry_.lower_bound(now);
  for (auto it = by_expiry_.begin(); it != end; ++it) expiry_.erase(it->second);
  by_expiry_.erase(by_expiry_.begin(), end);
}

}  // namespace sluice::auth
