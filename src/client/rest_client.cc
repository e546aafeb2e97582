#include "client/rest_client.h"

#include <cstdlib>

#include <httplib.h>

namespace sluice::client {
namespace {

using nlohmann::json;

std::string FromEnv(const std::string& flag, const char* variable) {
  if (!flag.empty()) return flag;
  const char* value = std::getenv(variable);
  return value != nullptr ? value : "";
}

Result<json> ToResult(const httplib::Result& result, const std::string& server) {
  if (!result) {
    return Status(StatusCode::kUnavailable,
                  "cannot reach the controller at " + server + ": " +
                      httplib::to_string(result.error()));
  }
  json body = json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  if (result->status >= 200 && result->status < 300) {
    if (body.is_discarded()) {
      return Status(StatusCode::kInternal, "the controller answered with malformed JSON");
    }
    return body;
  }
  std::string message = "HTTP " + std::to_string(result->status);
  if (body.is_object() && body.contains("error") && body["error"].is_string()) {
    message = body["error"].get<std::string>();
  } else if (!result->body.empty() && result->body.size() < 500) {
    message += ": " + result->body;
  }
  return StatusForHttp(result->status, message);
}

}  // namespace

Result<ClientOptions> ResolveClientOptions(const std::string& server_flag,
                                           const std::string& token_flag) {
  ClientOptions options{.server = FromEnv(server_flag, "SLUICE_SERVER"),
                        .token = FromEnv(token_flag, "SLUICE_TOKEN")};
  if (options.server.empty()) {
    return InvalidArgument("no controller: pass --server URL or set SLUICE_SERVER");
  }
  if (options.server.find("://") == std::string::npos) options.server = "http://" + options.server;
  return options;
}

Status StatusForHttp(int http_status, const std::string& message) {
  switch (http_status) {
    case 400: return Status(StatusCode::kInvalidArgument, message);
    case 401: return Status(StatusCode::kUnauthenticated, message);
    case 403: return Status(StatusCode::kPermissionDenied, message);
    case 404: return Status(StatusCode::kNotFound, message);
    case 409: return Status(StatusCode::kFailedPrecondition, message);
    case 413: return Status(StatusCode::kResourceExhausted, message);
    case 422: return Status(StatusCode::kOutOfRange, message);  // can never run (R-UX-2)
    default: return Status(StatusCode::kInternal, message);
  }
}

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kResourceExhausted:
    case StatusCode::kOutOfRange:
      return 2;
    default:
      return 1;
  }
}

RestClient::RestClient(ClientOptions options)
    : options_(std::move(options)), http_(std::make_unique<httplib::Client>(options_.server)) {
  if (!options_.token.empty()) http_->set_bearer_token_auth(options_.token.c_str());
  http_->set_connection_timeout(std::chrono::seconds(5));
  http_->set_read_timeout(options_.timeout);
  http_->set_write_timeout(options_.timeout);
  http_->set_keep_alive(true);
  http_->set_tcp_nodelay(true);  // a POST's body must not wait for the server's delayed ACK
}

RestClient::~RestClient() = default;

Result<json> RestClient::Get(const std::string& path) {
  return ToResult(http_->Get(path.c_str()), options_.server);
}

Result<json> RestClient::Post(const std::string& path, const json& body) {
  return ToResult(http_->Post(path.c_str(), body.dump(), "application/json"), options_.server);
}

}  // namespace sluice::client
