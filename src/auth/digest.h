// Token digests (R-SEC-2): SHA-256 through OpenSSL, and a comparison whose time does not
// depend on where two byte strings differ, so a token cannot be guessed byte by byte from
// response times.
// Thread-safety: pure functions.
// Implements R-SEC-2 (hashed tokens).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::auth {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::string_view bytes);
// HMAC-SHA-256 (RFC 2104) of `message` under `key`: credentials the controller mints and
// checks itself (a job's step credential, server/job_credential.h).
Sha256Digest HmacSha256(std::string_view key, std::string_view message);

// Lowercase hex of a digest (64 characters): the form `token_sha256:` holds.
std::string ToHex(const Sha256Digest& digest);

// Parses 64 hex digits (either case). Returns false, leaving `out` unspecified, otherwise.
bool ParseHexDigest(std::string_view hex, Sha256Digest& out);

// Equal digests; the time taken does not depend on the contents.
bool ConstantTimeEqual(const Sha256Digest& a, const Sha256Digest& b);

}  // namespace sluice::auth
