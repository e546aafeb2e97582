// RequestGuard: the limits every request meets before any work is done for it (issue 19,
// "Input"; STYLE.md "Limits before work on every input from the network").
//
// Two parts:
//   * pure checks, usable without sockets (the HTTP handlers, the fuzz targets, tests):
//     UTF-8 validity, a non-recursive scan of JSON text that bounds nesting and finds numbers
//     that overflow, a body parser that applies all of them before nlohmann::json sees the
//     text and names the field an error is in, and a job id parser;
//   * InstallRequestGuard: cpp-httplib's pre-routing handler, which runs after the request
//     line and headers were read and before the body is: path length and UTF-8, query
//     parameters' UTF-8, no Content-Encoding (a 1 MB gzip body must not become 1 GiB), no
//     chunked Transfer-Encoding (it escapes the library's length limit), the Content-Length
//     within the route's limit, the `Sluice-Protocol` version served (wire/protocol_version.h,
//     R-OPS-5), and the credential checked before a body is read.
//
// Outcomes are Status codes mapped by http_reply.h, except the HTTP-only refusals the
// handler answers itself: 411 (chunked), 414 (path too long), 415 (Content-Encoding), and a
// protocol version not served: 400 with wire::ProtocolRefusalBody.
// Invariant: nothing here recurses on the input, and nothing throws.
// Thread-safety: pure functions; the installed handler is called concurrently by httplib.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::server {

inline constexpr int kMaxJsonDepth = 64;
inline constexpr size_t kMaxPathBytes = 2048;

// kInvalidArgument "<where>: invalid UTF-8 at byte N" when `text` is not valid UTF-8
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
Status CheckUtf8(std::string_view text, const std::string& where);

// Scans JSON text without recursion: kInvalidArgument when arrays/objects nest deeper than
// `max_depth` ("body: nesting deeper than 64 at byte N (command)") or a number is not a
// finite double ("tasks: number 1e400 out of range"). Does not check the grammar (the parser
// does, after this).
Status ScanJson(std::string_view text, int max_depth = kMaxJsonDepth);

// The field at byte `offset` of JSON text, as `jobs[1].tasks`; "" at the top level.
std::string JsonPathAt(std::string_view text, size_t offset);

// The checks above, then the parse: kResourceExhausted when larger than `limit`,
// kInvalidArgument for invalid UTF-8, deep nesting, overflowing numbers or malformed JSON
// ("malformed JSON at byte N (jobs[1].tasks): ...").
Result<nlohmann::json> ParseJsonBody(std::string_view body, size_t limit);

// A job id from a URL path segment: kInvalidArgument "job id: expected an integer in
// [1, 2^63-1], got '...'" unless it is one.
Result<int64_t> ParseJobId(std::string_view text);

// JSON text of `value` that never throws: invalid UTF-8 in strings becomes U+FFFD.
std::string SafeDump(const nlohmann::json& value);

struct RequestGuardOptions {
  size_t max_body_bytes = 1 << 20;
  size_t max_batch_body_bytes = 64 << 20;  // paths ending in /batch
  // Checks the credential of a request that carries a body, before the body is read; returns
  // its refusal (kUnauthenticated, kPermissionDenied) or Ok. Null: not checked.
  std::function<Status(const httplib::Request&)> authenticate;
  // Runs once the checks above pass, before the body is read and the routes run; true when
  // it answered (a standby's redirect, HaFront). Null: none.
  std::function<bool(const httplib::Request&, httplib::Response&)> front;
};

// Installs the pre-routing handler on `server` (replacing any other).
void InstallRequestGuard(httplib::Server& server, RequestGuardOptions options);

}  // namespace sluice::server
