// Reply: the HTTP front end's answer (status code and JSON body), and the one mapping from
// the controller's outcomes (outcome.h) to HTTP (STYLE.md: the mapping lives only in the front
// end, in one place). Part of the HTTP front end (http_api.h); the controller's parts never
// include it.
//
// A failure's status follows from its Status code alone:
//   kOk 200, kInvalidArgument 400, kOutOfRange 400, kUnauthenticated 401,
//   kPermissionDenied 403, kNotFound 404, kAlreadyExists 409, kFailedPrecondition 409,
//   kResourceExhausted 413, kInternal 500, kUnavailable 503;
// and a refusal's from its kind:
//   kNeverRuns 422, kNotModified 422, kKeyReused 422, kKeyInFlight 409, kOverQuota 429.
// Bodies: {"error": message} for a failure; {"error": message, "cause": cause} for a refusal
// (no "cause" when the refusal has none); the value itself on success.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "server/outcome.h"

namespace sluice::server {

// A status code and JSON body (an {"error": ...} object when >= 400). Large listings come
// already serialised in `text` (then `body` is null): building a tree of 100,000 job objects
// only to dump it costs more than writing the text.
struct Reply {
  int status = 200;
  nlohmann::json body;
  std::string text;  // the body as JSON text when not empty

  Reply() = default;
  Reply(int status_in, nlohmann::json body_in, std::string text_in = "")
      : status(status_in), body(std::move(body_in)), text(std::move(text_in)) {}
  // ReplyOf(outcome) with 200 on success: the front end's mapping, also for tests that
  // drive the controller and read its answers as a client would.
  Reply(Outcome<nlohmann::json> outcome);  // NOLINT: implicit on purpose
  // A listing the controller wrote as JSON text (200 with `text`), or its failure.
  Reply(Result<std::string> listing);  // NOLINT: implicit on purpose

  static Reply Error(int status, const std::string& message) {
    return Reply{status, {{"error", message}}};
  }

  // The body as JSON (`text` parsed when set); for tests and small replies.
  nlohmann::json Json() const {
    return text.empty() ? body : nlohmann::json::parse(text, nullptr, false);
  }
};

// The HTTP status of a failure's code and of a refusal's kind (the tables above).
int HttpStatusOf(StatusCode code);
int HttpStatusOf(RefusalKind kind);

// The error reply of a failed Status: its HTTP status and {"error": message}.
// REQUIRES: !status.ok().
Reply ErrorReply(const Status& status);

// The one mapping: `ok_status` (200, or 201 for a creation) with the value as body, the
// failure's reply, or the refusal's.
Reply ReplyOf(Outcome<nlohmann::json> outcome, int ok_status = 200);

}  // namespace sluice::server
