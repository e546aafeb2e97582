// RestClient: the CLI verbs' connection to the controller's REST API (docs/api.md).
//
// Options come from flags, falling back to SLUICE_SERVER and SLUICE_TOKEN (R-SRV-5b). Every
// call returns the parsed JSON body or a Status whose code follows the HTTP status
// (400 kInvalidArgument, 401 kUnauthenticated, 403 kPermissionDenied, 404 kNotFound,
// 409 kFailedPrecondition, 413 kResourceExhausted, 422 kOutOfRange (a job that can never run),
// 5xx kInternal, no answer kUnavailable)
// and whose message is the server's `error` text.
// Thread-safety: one RestClient per thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace httplib {
class Client;
}

namespace sluice::client {

struct ClientOptions {
  std::string server;  // http://127.0.0.1:PORT
  std::string token;
  std::chrono::seconds timeout{60};
};

// Flag values win; empty flags fall back to SLUICE_SERVER / SLUICE_TOKEN.
// Returns kInvalidArgument when no server is given either way.
Result<ClientOptions> ResolveClientOptions(const std::string& server_flag,
                                           const std::string& token_flag);

// The Status for an HTTP status and the server's error text.
Status StatusForHttp(int http_status, const std::string& message);

// CLI exit code for a failed call: 2 for bad input (400, 404, 413, 422), 1 otherwise.
int ExitCodeFor(const Status& status);

class RestClient {
 public:
  explicit RestClient(ClientOptions options);
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  Result<nlohmann::json> Get(const std::string& path);
  Result<nlohmann::json> Post(const std::string& path, const nlohmann::json& body);

 private:
  ClientOptions options_;
  std::unique_ptr<httplib::Client> http_;
};

}  // namespace sluice::client
