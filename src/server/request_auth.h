// RequestAuthenticator: who sends a request, from its `Authorization` header (R-SRV-5,
// R-SEC-2):
//   - `Bearer <token>`: the token's SHA-256 is compared, in constant time, with the digest of
//     every configured token (`token:` digested at load, or `token_sha256:` as given); every
//     entry is compared, so the time does not tell which one matched; an `auth.agents` token
//     is the agent role bound to its hosts (Caller::agent_hosts), the shared agent token and
//     MUNGE uid 0 the agent role for any host;
//   - `Munge <credential>` (when `auth.munge` or `--munge-socket` enables it): decoded by the
//     local munged; refused when invalid, expired, rewound or already used (a ReplayCache
//     remembers each accepted credential until it expires, at most kMaxRememberedCredentials);
//     uid 0 is the agent role on the agent routes and the user root on the others (issue
//     47.8); any other uid is the user named by its account on this host.
// Administrators: the names in `auth.admins`, and token users with `admin: true`.
//
// Thread-safety: all methods may be called concurrently (one internal mutex; munged is asked
// without holding it). Configure swaps the configuration atomically.
// Implements R-SEC-2 (server side), R-SRV-5 (tokens).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "auth/digest.h"
#include "auth/replay_cache.h"
#include "config/cluster_yaml.h"
#include "server/context.h"

namespace sluice::server {

inline constexpr size_t kMaxRememberedCredentials = 1 << 18;

struct RequestAuthOptions {
  // Non-empty: MUNGE is on with this socket, whatever the YAML says (`--munge-socket`).
  std::string munge_socket;
  size_t max_remembered = kMaxRememberedCredentials;
  std::function<int64_t()> now_seconds;  // null: the system clock
  // uid -> account name; null: the password database (getpwuid_r).
  std::function<std::optional<std::string>(uint32_t)> account_name;
};

class RequestAuthenticator {
 public:
  RequestAuthenticator(const config::AuthConfig& auth, RequestAuthOptions options);

  // Replaces the tokens, administrators and MUNGE settings (reconfiguration). Remembered
  // credentials stay remembered.
  void Configure(const config::AuthConfig& auth);

  // The caller an `Authorization` header value names.
  // Errors: kUnauthenticated (missing, malformed, unknown token; MUNGE off; credential
  // invalid, expired, replayed; uid without an account); kUnavailable (munged unreachable);
  // kUnavailable (too many unexpired credentials remembered).
  Result<Caller> Authenticate(std::string_view authorization);

  // A bearer token alone (`Authenticate("Bearer " + token)`).
  Result<Caller> AuthenticateToken(std::string_view token) const;

  // Whether `user` is an administrator (auth.admins, or a token user with admin: true).
  bool IsAdmin(const std::string& user) const;

 private:
  struct TokenEntry {
    auth::Sha256Digest digest;
    Caller caller;
  };
  Result<Caller> AuthenticateMunge(const std::string& credential);

  RequestAuthOptions options_;
  mutable Mutex mu_{LockRank::kAuth};
  std::vector<TokenEntry> tokens_;  // guarded by mu_
  std::set<std::string> admins_;    // guarded by mu_
  config::MungeConfig munge_;       // guarded by mu_
  auth::ReplayCache replay_;        // guarded by mu_
};

// Whether an authenticated caller may call a user route (`agent_route` false) or an agent
// route (true); fills `caller` with the role it acts in (MUNGE's root: either).
Status AuthorizeRoute(Result<Caller> authenticated, bool agent_route, Caller& caller);

}  // namespace sluice::server
