#include "client/rest_client.h"

#include <sys/random.h>

#include <cstdlib>
#include <random>
#include <thread>

#include "auth/munge.h"
#include "wire/protocol_version.h"

namespace sluice::client {
namespace {

using nlohmann::json;
using wire::BaseUrl;

std::string FromEnv(const std::string& flag, const char* variable) {
  if (!flag.empty()) return flag;
  const char* value = std::getenv(variable);
  return value != nullptr ? value : "";
}

Result<json> ToResult(const HttpReply& result, const std::string& server) {
  if (result.failure != HttpReply::Failure::kNone && result.streamed) {
    return Status(StatusCode::kUnavailable, "the connection to the controller at " + server +
                                                " broke during its answer: " + result.error);
  }
  if (result.failure != HttpReply::Failure::kNone) {
    return Status(StatusCode::kUnavailable,
                  "cannot reach the controller at " + server + ": " + result.error);
  }
  if (result.streamed) return json();  // the body went to a sink
  json body = json::parse(result.body, nullptr, /*allow_exceptions=*/false);
  if (result.status >= 200 && result.status < 300) {
    if (body.is_discarded()) {
      return Status(StatusCode::kInternal, "the controller answered with malformed JSON");
    }
    return body;
  }
  std::string message = "HTTP " + std::to_string(result.status);
  if (body.is_object() && body.contains("error") && body["error"].is_string()) {
    message = body["error"].get<std::string>();
  } else if (!result.body.empty() && result.body.size() < 500) {
    message += ": " + result.body;
  }
  return StatusForHttp(result.status, message);
}

// A refusal of a request sent without credentials says why none were sent (issue 47.8).
Status WithoutCredentials(const HttpReply& result, const std::string& url) {
  const char* env = std::getenv("SLUICE_MUNGE_SOCKET");
  const std::string socket = env != nullptr && *env != '\0' ? env : auth::kDefaultMungeSocket;
  const Result<json> refused = ToResult(result, url);
  return Status(StatusCode::kUnauthenticated,
                (refused ? std::string("refused") : refused.error().message()) +
                    " (this client sent no credentials: no token (--token, SLUICE_TOKEN) and "
                    "no MUNGE socket at " + socket +
                    " (SLUICE_MUNGE_SOCKET): is munged running on this host?)");
}

}  // namespace

Result<ClientOptions> ResolveClientOptions(const std::string& server_flag,
                                           const std::string& token_flag,
                                           const std::string& ca_file_flag) {
  ClientOptions options{.server = FromEnv(server_flag, "SLUICE_SERVER"),
                        .token = FromEnv(token_flag, "SLUICE_TOKEN"),
                        .ca_file = FromEnv(ca_file_flag, "SLUICE_CA_FILE")};
  if (options.token.empty()) {
    std::string socket = FromEnv("", "SLUICE_MUNGE_SOCKET");
    if (socket.empty()) socket = auth::kDefaultMungeSocket;
    if (auth::IsSocket(socket)) options.munge_socket = socket;
  }
  if (options.server.empty()) {
    return InvalidArgument("no controller: pass --server URL or set SLUICE_SERVER");
  }
  Result<std::vector<std::string>> urls = wire::ParseServerList(options.server);
  if (!urls) return urls.error();
  options.server.clear();
  for (const std::string& url : *urls) options.server += (options.server.empty() ? "" : ",") + url;
  return options;
}

Status StatusForHttp(int http_status, const std::string& message) {
  switch (http_status) {
    case 400:
      return Status(StatusCode::kInvalidArgument, message);
    case 401:
      return Status(StatusCode::kUnauthenticated, message);
    case 403:
      return Status(StatusCode::kPermissionDenied, message);
    case 404:
      return Status(StatusCode::kNotFound, message);
    case 409:
      return Status(StatusCode::kFailedPrecondition, message);
    case 413:
      return Status(StatusCode::kResourceExhausted, message);
    case 429:
      return Status(StatusCode::kResourceExhausted, message);  // a pending quota
    case 503:
      return Status(StatusCode::kUnavailable, message);
    case 422:
      return Status(StatusCode::kOutOfRange, message);  // can never run (R-UX-2)
    default:
      return Status(StatusCode::kInternal, message);
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

bool IsSubmission(const std::string& path) {
  return path == "/v1/jobs" || path == "/v1/jobs/batch";
}

std::string NewIdempotencyKey() {
  // getrandom(2) first: std::random_device's set-up probes the CPU (cpuid, which traps to the
  // hypervisor in a VM), a measurable part of a `sluice submit` process (issue 21).
  uint32_t words[4] = {};
  if (getrandom(words, sizeof words, 0) != static_cast<ssize_t>(sizeof words)) {
    std::random_device device;
    for (uint32_t& word : words) word = device();
  }
  std::string key = "sluice-";
  constexpr char kHex[] = "0123456789abcdef";
  for (const uint32_t word : words) {
    for (int shift = 28; shift >= 0; shift -= 4) key += kHex[(word >> shift) & 0xf];
  }
  return key;
}

namespace {
// Every request states the protocol it speaks (R-OPS-5), and its credential when it has one.
HttpHeaders AuthHeaders(const std::string& authorization) {
  HttpHeaders headers = {{wire::kProtocolHeader, wire::ToString(wire::kProtocolVersion)}};
  if (!authorization.empty()) headers.emplace_back("Authorization", authorization);
  return headers;
}
}  // namespace

RestClient::RestClient(ClientOptions options)
    : options_(std::move(options)), follower_([this] {
        Result<std::vector<std::string>> urls = wire::ParseServerList(options_.server);
        return urls ? *urls : std::vector<std::string>{options_.server};
      }()) {}

RestClient::~RestClient() = default;

HttpTransport& RestClient::Connect() {
  if (http_ && connected_to_ == follower_.current()) return *http_;
  connected_to_ = follower_.current();
  http_ = NewTransport(connected_to_, TransportOptions{.connect_timeout = std::chrono::seconds(5),
                                                       .timeout = options_.timeout,
                                                       .ca_file = options_.ca_file});
  return *http_;
}

Result<json> RestClient::Call(bool idempotent, const Sender& send, const bool* consumed) {
  const auto deadline = std::chrono::steady_clock::now() + options_.follow_for;
  while (true) {
    // A MUNGE credential is single-use: every attempt carries a fresh one.
    Result<std::string> authorization = Authorization();
    if (!authorization) return authorization.error();
    HttpReply result = send(Connect(), *authorization);
    int status = result.failure == HttpReply::Failure::kNone ? result.status : 0;
    // A request that may have reached the controller is not sent twice unless it is a read.
    const bool maybe_sent = result.failure == HttpReply::Failure::kMaybeSent;
    // Nor is one whose answer was partly consumed (a streamed listing already printed).
    if (consumed != nullptr && *consumed) idempotent = false;
    // A controller whose certificate is not trusted stays untrusted: no use retrying.
    const bool untrusted = result.failure == HttpReply::Failure::kUntrusted;
    if (!wire::LeaderFollower::NotServed(status) || (maybe_sent && !idempotent) || untrusted ||
        std::chrono::steady_clock::now() >= deadline) {
      if (status != 0) follower_.OnSuccess();
      if (status == 401 && authorization->empty()) return WithoutCredentials(result, connected_to_);
      return ToResult(result, connected_to_);
    }
    std::string hint;
    if (status == 307) {
      hint = result.location;
    } else if (status == 503) {
      json body = json::parse(result.body, nullptr, /*allow_exceptions=*/false);
      if (body.is_object() && body.contains("leader") && body["leader"].is_string()) {
        hint = body["leader"].get<std::string>();
      }
      // A leader that answers 503 itself (no store quorum) is the leader: no use moving.
      if (BaseUrl(hint) == connected_to_) return ToResult(result, connected_to_);
    }
    http_.reset();  // a broken keep-alive connection is not reused
    std::this_thread::sleep_for(follower_.OnNotServed(status, hint));
  }
}

Result<std::string> RestClient::Authorization() const {
  if (!options_.authorization.empty()) return options_.authorization;
  if (!options_.token.empty()) return "Bearer " + options_.token;
  if (options_.munge_socket.empty()) return std::string();
  Result<std::string> credential = auth::MungeEncode(options_.munge_socket);
  if (!credential) return credential.error();
  return "Munge " + *credential;
}

Result<json> RestClient::Get(const std::string& path) {
  return Call(true, [&](HttpTransport& http, const std::string& authorization) {
    return http.Send("GET", path, AuthHeaders(authorization), "");
  });
}

Status RestClient::GetStream(const std::string& path, const BodySink& sink) {
  bool consumed = false;
  const BodySink counted = [&](std::string_view piece) {
    consumed = true;
    return sink(piece);
  };
  Result<json> done = Call(
      true,
      [&](HttpTransport& http, const std::string& authorization) {
        return http.Stream(path, AuthHeaders(authorization), counted);
      },
      &consumed);
  return done ? Status::Ok() : done.error();
}

Result<json> RestClient::Post(const std::string& path, const json& body) {
  const std::string text = body.dump();
  // A submission carries an Idempotency-Key (the same for every attempt of this call), so it
  // may be repeated after a lost reply without submitting twice (issue 19).
  const std::string key = IsSubmission(path) ? NewIdempotencyKey() : "";
  return Call(!key.empty(), [&](HttpTransport& http, const std::string& authorization) {
    HttpHeaders headers = AuthHeaders(authorization);
    if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
    return http.Send("POST", path, headers, text);
  });
}

Result<json> RestClient::Patch(const std::string& path, const json& body) {
  const std::string text = body.dump();
  return Call(false, [&](HttpTransport& http, const std::string& authorization) {
    return http.Send("PATCH", path, AuthHeaders(authorization), text);
  });
}

Result<json> RestClient::Delete(const std::string& path) {
  return Call(false, [&](HttpTransport& http, const std::string& authorization) {
    return http.Send("DELETE", path, AuthHeaders(authorization), "");
  });
}

}  // namespace sluice::client
