#include "server/request_auth.h"

#include <pwd.h>
#include <unistd.h>

#include "auth/munge.h"

namespace sluice::server {
namespace {

std::optional<std::string> AccountOf(uint32_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::string buffer(size > 0 ? static_cast<size_t>(size) : 16384, '\0');
  struct passwd pw {};
  struct passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  return std::string(found->pw_name);
}

int64_t SystemSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status Refused(std::string what) { return Status(StatusCode::kUnauthenticated, std::move(what)); }

}  // namespace

RequestAuthenticator::RequestAuthenticator(const config::AuthConfig& auth,
                                           RequestAuthOptions options)
    : options_(std::move(options)), replay_(options_.max_remembered) {
  if (!options_.now_seconds) options_.now_seconds = SystemSeconds;
  if (!options_.account_name) options_.account_name = AccountOf;
  Configure(auth);
}

void RequestAuthenticator::Configure(const config::AuthConfig& auth) {
  std::set<std::string> admins(auth.admins.begin(), auth.admins.end());
  std::vector<TokenEntry> tokens;
  auto add = [&tokens](const std::string& clear, const std::string& hex, Caller caller) {
    TokenEntry entry{.digest = auth::Sha256(clear), .caller = std::move(caller)};
    // The YAML reader checked the digest's form; a malformed one matches nothing.
    if (clear.empty() && !auth::ParseHexDigest(hex, entry.digest)) return;
    tokens.push_back(std::move(entry));
  };
  if (!auth.agent_token.empty() || !auth.agent_token_sha256.empty()) {
    add(auth.agent_token, auth.agent_token_sha256, Caller{.agent = true});
  }
  for (const config::AgentCredential& a : auth.agents) {  // bound to their hosts (issue 19)
    add(a.token, a.token_sha256,
        Caller{.agent = true,
               .agent_hosts =
                   std::make_shared<const std::set<std::string>>(a.hosts.begin(), a.hosts.end())});
  }
  for (const config::AuthUser& u : auth.users) {
    if (u.admin) admins.insert(u.name);
  }
  for (const config::AuthUser& u : auth.users) {
    add(u.token, u.token_sha256, Caller{.user = u.name, .admin = admins.contains(u.name)});
  }
  config::MungeConfig munge = auth.munge;
  if (!options_.munge_socket.empty()) munge = {.enabled = true, .socket = options_.munge_socket};
  std::lock_guard lock(mu_);
  tokens_ = std::move(tokens);
  admins_ = std::move(admins);
  munge_ = std::move(munge);
}

Result<Caller> RequestAuthenticator::Authenticate(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  constexpr std::string_view kMunge = "Munge ";
  if (authorization.starts_with(kBearer)) {
    return AuthenticateToken(authorization.substr(kBearer.size()));
  }
  if (authorization.starts_with(kMunge)) {
    return AuthenticateMunge(std::string(authorization.substr(kMunge.size())));
  }
  return Refused(
      "missing or unknown credentials (send Authorization: Bearer <token>, or "
      "Munge <credential> when the controller accepts MUNGE)");
}

Result<Caller> RequestAuthenticator::AuthenticateToken(std::string_view token) const {
  const Status refused = Refused("missing or unknown token (send Authorization: Bearer <token>)");
  if (token.empty()) return refused;
  const auth::Sha256Digest digest = auth::Sha256(token);
  std::lock_guard lock(mu_);
  const TokenEntry* match = nullptr;
  for (const TokenEntry& entry : tokens_) {
    // No early exit: every entry is compared whichever matches.
    if (auth::ConstantTimeEqual(entry.digest, digest) && match == nullptr) match = &entry;
  }
  if (match == nullptr) return refused;
  return match->caller;
}

bool RequestAuthenticator::IsAdmin(const std::string& user) const {
  std::lock_guard lock(mu_);
  return admins_.contains(user);
}

Result<Caller> RequestAuthenticator::AuthenticateMunge(const std::string& credential) {
  std::string socket;
  {
    std::lock_guard lock(mu_);
    if (!munge_.enabled) {
      return Refused("this controller does not accept MUNGE credentials (auth.munge is off)");
    }
    socket = munge_.socket;
  }
  // 1. munged decodes (uid, times) without the lock held: it is a socket round trip.
  Result<auth::MungeIdentity> identity = auth::MungeDecode(socket, credential);
  if (!identity) return identity.error();
  // 2. The account, for a user; uid 0 is the agent role.
  std::optional<std::string> account;
  if (identity->uid != 0) {
    account = options_.account_name(identity->uid);
    if (!account) {
      return Refused("uid " + std::to_string(identity->uid) +
                     " has no account on the controller's host");
    }
  }
  // 3. Once only: remember it until it expires.
  const auth::Sha256Digest key = auth::Sha256(credential);
  std::lock_guard lock(mu_);
  SLUICE_RETURN_IF_ERROR(
      replay_.Accept(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()),
                     identity->encoded_at + identity->ttl_seconds, options_.now_seconds()));
  if (!account) {
    return Caller{.user = "root", .admin = admins_.contains("root"), .agent = true,
                  .munge_root = true};
  }
  return Caller{.user = *account, .admin = admins_.contains(*account)};
}

Status AuthorizeRoute(Result<Caller> authenticated, bool agent_route, Caller& caller) {
  if (!authenticated) return authenticated.error();
  if (authenticated->munge_root) {
    caller = *authenticated;
    caller.agent = agent_route;
    return Status::Ok();
  }
  if (authenticated->agent != agent_route) {
    return Status(StatusCode::kPermissionDenied,
                  agent_route ? "only the agent (its token, or MUNGE as uid 0) may call "
                                "/v1/agents/..."
                              : "the agent token may only call /v1/agents/...");
  }
  caller = *authenticated;
  return Status::Ok();
}

}  // namespace sluice::server
