#include "server/http_reply.h"

#include <utility>

namespace sluice::server {

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 413;
    case StatusCode::kInternal:
      return 500;
    case StatusCode::kUnavailable:
      return 503;
  }
  return 500;
}

int HttpStatusOf(RefusalKind kind) {
  switch (kind) {
    case RefusalKind::kNeverRuns:
    case RefusalKind::kNotModified:
    case RefusalKind::kKeyReused:
      return 422;
    case RefusalKind::kKeyInFlight:
      return 409;
    case RefusalKind::kOverQuota:
      return 429;
  }
  return 500;
}

Reply ErrorReply(const Status& status) {
  return Reply::Error(HttpStatusOf(status.code()), status.message());
}

Reply ReplyOf(Outcome<nlohmann::json> outcome, int ok_status) {
  if (const Status* failure = outcome.failure()) return ErrorReply(*failure);
  if (const Refusal* refusal = outcome.refusal()) {
    nlohmann::json body = {{"error", refusal->message}};
    if (!refusal->cause.is_null()) body["cause"] = refusal->cause;
    return Reply{HttpStatusOf(refusal->kind), std::move(body)};
  }
  return Reply{ok_status, std::move(outcome).value()};
}

Reply::Reply(Outcome<nlohmann::json> outcome) : Reply(ReplyOf(std::move(outcome))) {}

Reply::Reply(Result<std::string> listing) {
  if (!listing) {
    *this = ErrorReply(listing.error());
    return;
  }
  text = std::move(listing).value();
}

}  // namespace sluice::server
