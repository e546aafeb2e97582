// Reply: an HTTP-shaped outcome of a controller call (status code and JSON body), and the
// one mapping from a Status to its HTTP status code (STYLE.md: the mapping lives only in
// server/, in one function). Part of the HTTP front end (http_api.h).
//
// The controller's parts return Status/Result with a code from base/status.h; the HTTP
// status follows from the code alone:
//   kOk 200, kInvalidArgument 400, kOutOfRange 400, kUnauthenticated 401,
//   kPermissionDenied 403, kNotFound 404, kAlreadyExists 409, kFailedPrecondition 409,
//   kResourceExhausted 413, kInternal 500, kUnavailable 503.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace sluice::server {

// A status code and JSON body (an {"error": ...} object when >= 400). Large listings come
// already serialised in `text` (then `body` is null): building a tree of 100,000 job objects
// only to dump it costs more than writing the text.
struct Reply {
  int status = 200;
  nlohmann::json body;
  std::string text;  // the body as JSON text when not empty

  static Reply Error(int status, const std::string& message) {
    return Reply{status, {{"error", message}}};
  }

  // The body as JSON (`text` parsed when set); for tests and small replies.
  nlohmann::json Json() const {
    return text.empty() ? body : nlohmann::json::parse(text, nullptr, false);
  }
};

// The HTTP status of a Status code (the table above).
int HttpStatusOf(StatusCode code);

// The error reply of a failed Status: its HTTP status and {"error": message}.
// REQUIRES: !status.ok().
Reply ErrorReply(const Status& status);

// `ok_status` (200 or 201) with the value as body, or the error reply.
Reply ReplyOf(Result<nlohmann::json> result, int ok_status = 200);

}  // namespace sluice::server
