// RestClient: the CLI verbs' connection to the controller's REST API (docs/api.md).
//
// Options come from flags, falling back to SLUICE_SERVER and SLUICE_TOKEN (R-SRV-5b). Without
// a token, each request carries a fresh MUNGE credential when munged's socket exists
// (SLUICE_MUNGE_SOCKET, else /run/munge/munge.socket.2; R-SEC-2). `https://` servers are
// verified against --ca-file / SLUICE_CA_FILE (else the system's CAs). The
// server may be a comma-separated list of controllers (R-HA-2): calls follow the leader
// (wire/leader_follow.h) — a 307, a 503 or no connection moves to the next URL with a
// bounded back-off, for at most `follow_for`; a POST whose request may have been sent (the
// connection broke after it) is not repeated. Every
// call returns the parsed JSON body or a Status whose code follows the HTTP status
// (400 kInvalidArgument, 401 kUnauthenticated, 403 kPermissionDenied, 404 kNotFound,
// 409 kFailedPrecondition, 413 and 429 (a pending quota) kResourceExhausted, 422 kOutOfRange
// (a job that can never run),
// 503 and no answer kUnavailable, other 5xx kInternal)
// and whose message is the server's `error` text.
// Thread-safety: one RestClient per thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "client/http_transport.h"
#include "wire/leader_follow.h"

namespace sluice::client {

struct ClientOptions {
  std::string server;  // http://127.0.0.1:PORT[,http://...]
  std::string token;
  std::chrono::seconds timeout{60};
  std::string munge_socket;             // used when `token` is empty; empty: no credentials
  std::string ca_file;                  // PEM CA bundle verifying an https:// server
  std::chrono::seconds follow_for{30};  // how long to look for a leader
  // Sent as the Authorization header instead of the token or MUNGE (a job's own credential,
  // `Job <SLUICE_JOB_CREDENTIAL>`, for its steps: server/job_credential.h).
  std::string authorization;
};

// Flag values win; empty flags fall back to SLUICE_SERVER / SLUICE_TOKEN / SLUICE_CA_FILE.
// Returns kInvalidArgument when no server is given either way.
Result<ClientOptions> ResolveClientOptions(const std::string& server_flag,
                                           const std::string& token_flag,
                                           const std::string& ca_file_flag = "");

// Submissions (POST /v1/jobs, /v1/jobs/batch) carry an `Idempotency-Key`: a fresh random key
// per call, the same for every attempt of that call, so `Post` repeats them (bounded by
// `follow_for`) even when the connection broke after the request was sent.
bool IsSubmission(const std::string& path);
std::string NewIdempotencyKey();

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
  // A GET whose successful body goes to `sink` piece by piece as it arrives (a streamed
  // listing, issue 45), following the leader as Get does until the first piece; once a piece
  // was consumed the request is not repeated: a broken connection is then kUnavailable.
  // A sink that returns false ends the read (and the call returns Ok).
  Status GetStream(const std::string& path, const BodySink& sink);
  Result<nlohmann::json> Post(const std::string& path, const nlohmann::json& body);
  Result<nlohmann::json> Patch(const std::string& path, const nlohmann::json& body);
  // Not repeated once it may have been sent, as a PATCH.
  Result<nlohmann::json> Delete(const std::string& path);
  // The base URL of the controller that answered last ("" before any answer).
  const std::string& connected_to() const { return connected_to_; }

 private:
  // The Authorization header of one request (a MUNGE credential is single-use).
  Result<std::string> Authorization() const;
  // Sends with `send` to the leader, following it (see the header comment).
  // Sends one attempt with this Authorization header value (empty: none).
  using Sender = std::function<HttpReply(HttpTransport&, const std::string&)>;
  // `consumed` (may be null): set once part of an answer was consumed; no repeat after that.
  Result<nlohmann::json> Call(bool idempotent, const Sender& send,
                              const bool* consumed = nullptr);
  HttpTransport& Connect();

  ClientOptions options_;
  wire::LeaderFollower follower_;
  std::string connected_to_;
  std::unique_ptr<HttpTransport> http_;
};

}  // namespace sluice::client
