// MUNGE credentials (R-SEC-2), as Slurm uses them: a local munged, sharing one key with the
// munged of every other host, encodes the calling process's uid and gid into a credential,
// and any munged with that key decodes it, refusing it when it expired, is dated in the
// future, or (in that daemon's memory) was decoded before. This file wraps libmunge with a
// context naming the daemon's socket; one context per call, so the functions may run on any
// thread.
// Thread-safety: reentrant.
// Implements R-SEC-2 (MUNGE, both sides).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace sluice::auth {

// munged's socket when none is configured (Debian's munge package).
inline constexpr const char* kDefaultMungeSocket = "/run/munge/munge.socket.2";

struct MungeIdentity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t encoded_at = 0;   // seconds since the epoch, by the encoding host's clock
  int64_t ttl_seconds = 0;  // the credential expires at encoded_at + ttl_seconds
};

// A credential of the calling process's uid and gid, with an empty payload; `ttl_seconds` 0
// takes munged's default (300 s).
// Errors: kUnavailable when munged cannot be reached at `socket`; kInternal otherwise; the
// message names the socket and libmunge's reason.
Result<std::string> MungeEncode(const std::string& socket, int ttl_seconds = 0);

// Decodes `credential` through the munged at `socket`.
// Errors: kUnauthenticated for a credential that is invalid, expired, rewound, replayed or
// carries a payload (its message says which); kUnavailable when munged cannot be reached.
Result<MungeIdentity> MungeDecode(const std::string& socket, const std::string& credential);

// Whether `path` is a UNIX socket (a client then uses MUNGE when it has no token).
bool IsSocket(const std::string& path);

}  // namespace sluice::auth
