// The HTTPS carrier of client/http_transport.h: cpp-httplib's client with OpenSSL, verifying
// the server against TransportOptions::ca_file (else the system's CAs). Only the complete
// binary (and the test binaries) link it, so a plain-HTTP `sluice submit` never loads OpenSSL.
#include <httplib.h>

#include "client/http_transport.h"

namespace sluice::client {
namespace {

class HttpsTransport final : public HttpTransport {
 public:
  HttpsTransport(const std::string& base_url, const TransportOptions& options) : http_(base_url) {
    if (!options.ca_file.empty()) http_.set_ca_cert_path(options.ca_file.c_str());
    http_.set_connection_timeout(options.connect_timeout);
    http_.set_read_timeout(options.timeout);
    http_.set_write_timeout(options.timeout);
    http_.set_keep_alive(true);
    http_.set_tcp_nodelay(true);  // a POST's body must not wait for the server's delayed ACK
  }

  HttpReply Send(std::string_view method, const std::string& path, const HttpHeaders& headers,
                 const std::string& body) override {
    httplib::Headers sent(headers.begin(), headers.end());
    httplib::Result result = method == "GET" ? http_.Get(path.c_str(), sent)
                             : method == "POST"
                                 ? http_.Post(path.c_str(), sent, body, "application/json")
                             : method == "DELETE"
                                 ? http_.Delete(path.c_str(), sent, body, "application/json")
                                 : http_.Patch(path.c_str(), sent, body, "application/json");
    if (!result) return Failed(result.error());
    HttpReply reply;
    reply.status = result->status;
    reply.body = std::move(result->body);
    reply.location = result->get_header_value("Location");
    return reply;
  }

  // cpp-httplib's content receiver: a 2xx body to the sink as it arrives (issue 45).
  HttpReply Stream(const std::string& path, const HttpHeaders& headers,
                   const BodySink& sink) override {
    httplib::Headers sent(headers.begin(), headers.end());
    HttpReply reply;
    bool stopped = false;
    httplib::Result result = http_.Get(
        path.c_str(), sent,
        [&](const httplib::Response& response) {
          reply.status = response.status;
          reply.location = response.get_header_value("Location");
          reply.streamed = reply.status >= 200 && reply.status < 300;
          return true;
        },
        [&](const char* data, size_t length) {
          if (!reply.streamed) {
            reply.body.append(data, length);
            return true;
          }
          stopped = !sink(std::string_view(data, length));
          return !stopped;
        });
    if (!result && !(stopped && result.error() == httplib::Error::Canceled)) {
      const bool streamed = reply.streamed;
      reply = Failed(result.error());
      reply.streamed = streamed;
    }
    return reply;
  }

 private:
  static HttpReply Failed(httplib::Error error) {
    HttpReply reply;
    // A failed handshake (SSLConnection: reset, timed out on a busy controller) sent nothing
    // and may succeed again; only a certificate the CA does not sign stays untrusted. A
    // TLS client of a plain-HTTP controller retries until the follow window ends.
    reply.failure =
        error == httplib::Error::Connection || error == httplib::Error::SSLConnection
            ? HttpReply::Failure::kConnection
        : error == httplib::Error::SSLServerVerification ? HttpReply::Failure::kUntrusted
                                                         : HttpReply::Failure::kMaybeSent;
    reply.error = error == httplib::Error::SSLServerVerification
                      ? "its TLS certificate is not signed by a trusted CA (--ca-file / "
                        "SLUICE_CA_FILE)"
                      : httplib::to_string(error);
    return reply;
  }

  httplib::Client http_;
};

std::unique_ptr<HttpTransport> NewHttpsTransport(const std::string& base_url,
                                                 const TransportOptions& options) {
  return std::make_unique<HttpsTransport>(base_url, options);
}

}  // namespace

void EnableHttps() { SetHttpsTransport(NewHttpsTransport); }

}  // namespace sluice::client
