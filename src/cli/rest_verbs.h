// What every REST verb of the CLI needs: the --server/--token flags, a connected client, the
// error line and exit code of a failed call, and query escaping.
#pragma once

#include <CLI/CLI.hpp>
#include <cctype>
#include <iostream>
#include <string>

#include "client/rest_client.h"

namespace sluice::cli::verbs {

struct Connection {
  std::string server;
  std::string token;
  std::string ca_file;
};

inline void AddConnectionFlags(CLI::App* cmd, Connection& connection) {
  cmd->add_option("--server", connection.server,
                  "controller URL or comma-separated URLs (default $SLUICE_SERVER)");
  cmd->add_option("--token", connection.token,
                  "user token (default $SLUICE_TOKEN; without one: MUNGE, docs/security.md)");
  cmd->add_option("--ca-file", connection.ca_file,
                  "CA certificates verifying an https:// controller (default $SLUICE_CA_FILE)");
}

// Prints `error: <message>` and returns the exit code for the failure.
inline int Fail(const Status& status) {
  std::cerr << "error: " << status.message() << "\n";
  return client::ExitCodeFor(status);
}

// Runs `body` with a connected client; returns its exit code (2 without a server).
template <typename Body>
int WithClient(const Connection& connection, Body body) {
  Result<client::ClientOptions> options =
      client::ResolveClientOptions(connection.server, connection.token, connection.ca_file);
  if (!options) {
    std::cerr << "error: " << options.error().message() << "\n";
    return 2;
  }
  client::RestClient rest(*options);
  return body(rest);
}

inline std::string QueryEscape(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == ',' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace sluice::cli::verbs
