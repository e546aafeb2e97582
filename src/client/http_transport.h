// HttpTransport: how RestClient sends one request to one controller URL, whatever carries it.
//
// Two carriers (issue 21, the one-process-per-job submit path):
//  - plain HTTP (`http://`, NewPlainTransport, client/plain_http.cc): a blocking socket and one
//    write per request; it needs nothing but libc, so a `sluice submit` process starts without
//    loading cpp-httplib, OpenSSL or brotli (docs/performance.md "The submit loop");
//  - HTTPS (`https://`, client/https_transport.cc, cpp-httplib with OpenSSL): linked only into
//    the complete binary, which installs it with EnableHttps() before any client runs. Without
//    it, an https:// URL answers kUntrusted with a message saying so.
// Outcome model: `failure` says whether the request may have reached the server (RestClient
// repeats only what surely did not, or what is idempotent); `status`, `body` and `location` are
// the answer when failure is kNone.
// Thread-safety: one transport per thread (a RestClient owns its own).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::client {

struct HttpReply {
  enum class Failure {
    kNone,        // an answer: status, body, location
    kConnection,  // no connection: the request was not sent
    kMaybeSent,   // the connection broke after (part of) the request was written
    kUntrusted,   // TLS refused (an untrusted certificate, a failed handshake): no use retrying
  };
  Failure failure = Failure::kNone;
  std::string error;  // why, when failure != kNone
  int status = 0;
  std::string body;
  std::string location;  // the Location header (a 307 to the leader)
  // Some of a 2xx body went to a BodySink (Stream): `body` is empty, and a failure came after
  // part of the answer was consumed, so the request must not be repeated.
  bool streamed = false;
};

// Receives a body piece by piece as it arrives; false stops reading (the connection closes).
using BodySink = std::function<bool(std::string_view piece)>;

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct TransportOptions {
  std::chrono::seconds connect_timeout{5};
  std::chrono::seconds timeout{60};  // read and write
  std::string ca_file;               // https only
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Sends `method` (GET, POST, PATCH, DELETE) for `path` (with its query) and waits for the
  // answer. A non-GET request carries `body` as application/json.
  virtual HttpReply Send(std::string_view method, const std::string& path,
                         const HttpHeaders& headers, const std::string& body) = 0;
  // A GET whose 2xx body goes to `sink` as it arrives instead of into the reply (a streamed
  // listing, issue 45); any other status's body is read into the reply as Send reads it.
  // The default reads the whole body first (a carrier without streaming).
  virtual HttpReply Stream(const std::string& path, const HttpHeaders& headers,
                           const BodySink& sink);
};

// `base_url` is "scheme://host[:port]" (wire::BaseUrl). http:// goes to NewPlainTransport,
// https:// to the installed HTTPS factory (or a transport that fails with kUntrusted).
std::unique_ptr<HttpTransport> NewTransport(const std::string& base_url,
                                            const TransportOptions& options);

// REQUIRES: base_url starts with "http://". Keeps its connection open between requests.
std::unique_ptr<HttpTransport> NewPlainTransport(const std::string& base_url,
                                                 const TransportOptions& options);

using TransportFactory = std::unique_ptr<HttpTransport> (*)(const std::string& base_url,
                                                            const TransportOptions& options);
// Installs the HTTPS carrier (https_transport.cc's EnableHttps calls it). Not thread-safe:
// call it from main before any client exists.
void SetHttpsTransport(TransportFactory factory);

// Installs cpp-httplib's HTTPS carrier (defined in https_transport.cc, which only the complete
// binary and the test binaries link).
void EnableHttps();

}  // namespace sluice::client
