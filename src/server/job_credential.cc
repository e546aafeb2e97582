#include "server/job_credential.h"

#include <charconv>

#include "auth/digest.h"

namespace sluice::server {
namespace {

std::string Message(int64_t job, int64_t start_time) {
  return "sluice-job-credential:" + std::to_string(job) + ":" + std::to_string(start_time);
}

bool ParseNumber(std::string_view text, int64_t& out) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

std::string JobCredentials::Issue(int64_t job, int64_t start_time) const {
  return std::to_string(job) + "." + std::to_string(start_time) + "." +
         auth::ToHex(auth::HmacSha256(key_, Message(job, start_time)));
}

Result<JobCredentialClaim> JobCredentials::Verify(std::string_view credential) const {
  const Status refused(StatusCode::kUnauthenticated,
                       "malformed or unknown job credential (SLUICE_JOB_CREDENTIAL)");
  if (key_.empty()) return refused;
  const size_t first = credential.find('.');
  const size_t second = first == std::string_view::npos ? first : credential.find('.', first + 1);
  if (second == std::string_view::npos) return refused;
  JobCredentialClaim claim;
  auth::Sha256Digest given{};
  if (!ParseNumber(credential.substr(0, first), claim.job) ||
      !ParseNumber(credential.substr(first + 1, second - first - 1), claim.start_time) ||
      !auth::ParseHexDigest(credential.substr(second + 1), given)) {
    return refused;
  }
  if (!auth::ConstantTimeEqual(given, auth::HmacSha256(key_, Message(claim.job, claim.start_time)))) {
    return refused;
  }
  return claim;
}

}  // namespace sluice::server
