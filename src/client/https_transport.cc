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
    HttpReply reply;
    if (!result) {
      const httplib::Error error = result.error();
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
    reply.status = result->status;
    reply.body = std::move(result->body);
    reply.location = result->get_header_value("Location");
    return reply;
  }

 private:
  httplib::Client http_;
};

std::unique_ptr<HttpTransport> NewHttpsTransport(const std::string& base_url,
                                                 const TransportOptions& options) {
  return std::make_unique<HttpsTransport>(base_url, options);
}

}  // namespace

void EnableHttps() { SetHttpsTransport(NewHttpsTransport); }

}  // namespace sluice::client
