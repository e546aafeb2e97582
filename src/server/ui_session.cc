#include "server/ui_session.h"

#include <charconv>
#include <mutex>

#include "auth/digest.h"

namespace sluice::server {
namespace {

std::string Message(std::string_view user, int64_t expires) {
  return "sluice-ui-session:" + std::string(user) + ":" + std::to_string(expires);
}

}  // namespace

void UiSessions::SetKey(std::string key) {
  std::lock_guard lock(mu_);
  key_ = std::move(key);
}

Result<std::string> UiSessions::Issue(const std::string& user, int64_t expires) const {
  std::lock_guard lock(mu_);
  if (key_.empty()) return Status(StatusCode::kUnavailable, "no session key yet: try again");
  return std::string(kPrefix) + std::to_string(expires) + "." +
         auth::ToHex(auth::HmacSha256(key_, Message(user, expires))) + "." + user;
}

Result<std::string> UiSessions::Verify(std::string_view token, int64_t now) const {
  const Status refused(StatusCode::kUnauthenticated,
                       "unknown or expired dashboard session (log in again: sluice ui-login)");
  if (!token.starts_with(kPrefix)) return refused;
  token.remove_prefix(kPrefix.size());
  const size_t first = token.find('.');
  const size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos) return refused;
  int64_t expires = 0;
  const std::string_view number = token.substr(0, first);
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), expires);
  auth::Sha256Digest given{};
  const std::string_view user = token.substr(second + 1);
  if (error != std::errc() || end != number.data() + number.size() || number.empty() ||
      user.empty() || !auth::ParseHexDigest(token.substr(first + 1, second - first - 1), given)) {
    return refused;
  }
  std::lock_guard lock(mu_);
  if (key_.empty() || !auth::ConstantTimeEqual(given, auth::HmacSha256(key_, Message(user, expires)))) {
    return refused;
  }
  if (expires <= now) return refused;
  return std::string(user);
}

}  // namespace sluice::server
