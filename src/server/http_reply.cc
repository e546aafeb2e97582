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

Reply ErrorReply(const Status& status) {
  return Reply::Error(HttpStatusOf(status.code()), status.message());
}

Reply ReplyOf(Result<nlohmann::json> result, int ok_status) {
  if (!result) return ErrorReply(result.error());
  return Reply{ok_status, std::move(*result)};
}

}  // namespace sluice::server
