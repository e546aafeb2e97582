// The HTTP client an agent talks to its controller with (heartbeats, step streams): keep-alive,
// TCP_NODELAY (a POST's body must not wait for the server's delayed ACK), the CA bundle that
// verifies an https:// controller, and bounded waits.
// Thread-safety: a client is used by one thread at a time.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>

namespace sluice::agent {

struct ClientTimeouts {
  std::chrono::milliseconds connect;
  std::chrono::milliseconds read;
  std::chrono::milliseconds write;
};

inline std::unique_ptr<httplib::Client> NewControllerClient(const std::string& url,
                                                            const std::string& ca_file,
                                                            const ClientTimeouts& timeouts) {
  auto client = std::make_unique<httplib::Client>(url);
  if (!ca_file.empty()) client->set_ca_cert_path(ca_file);
  client->set_connection_timeout(timeouts.connect);
  client->set_read_timeout(timeouts.read);
  client->set_write_timeout(timeouts.write);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);
  return client;
}

}  // namespace sluice::agent
