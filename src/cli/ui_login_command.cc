// sluice ui-login [--ttl DURATION]   (issue 47.8)
// Opens a dashboard session (POST /v1/ui/sessions) as whoever this CLI authenticates as —
// MUNGE on a site without tokens — and prints the dashboard's address with the session token
// in its fragment (/ui/#token=...: the dashboard logs in with it and drops it from the
// address; a fragment is never sent to the server or kept in its logs).
#include <charconv>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/rest_verbs.h"
#include "client/text_fields.h"

namespace sluice::cli {
namespace {

using nlohmann::json;
using namespace verbs;

struct UiLoginCommand {
  Connection connection;
  std::string ttl;
};

// "3600", "90m", "12h", "2d" as seconds; nullopt when malformed.
std::optional<int64_t> ParseTtl(const std::string& text) {
  if (text.empty()) return std::nullopt;
  int64_t scale = 1;
  std::string digits = text;
  switch (text.back()) {
    case 's': scale = 1; digits.pop_back(); break;
    case 'm': scale = 60; digits.pop_back(); break;
    case 'h': scale = 3600; digits.pop_back(); break;
    case 'd': scale = 86400; digits.pop_back(); break;
    default: break;
  }
  int64_t n = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (error != std::errc() || end != digits.data() + digits.size() || digits.empty() || n <= 0 ||
      n > int64_t{1} << 40) {
    return std::nullopt;
  }
  return n * scale;
}

int RunUiLogin(const UiLoginCommand& cmd) {
  json body = json::object();
  if (!cmd.ttl.empty()) {
    std::optional<int64_t> ttl = ParseTtl(cmd.ttl);
    if (!ttl) {
      std::cerr << "error: --ttl " << cmd.ttl << ": expected seconds or N followed by s, m, h "
                << "or d (e.g. 12h)\n";
      return 2;
    }
    body["ttl_seconds"] = *ttl;
  }
  return WithClient(cmd.connection, [&](client::RestClient& rest) {
    Result<json> reply = rest.Post("/v1/ui/sessions", body);
    if (!reply) return Fail(reply.error());
    std::cout << "Dashboard session for " << reply->value("user", "") << " until "
              << client::LocalIsoTime(reply->value("expires", int64_t{0})) << ":\n  "
              << rest.connected_to() << "/ui/#token=" << reply->value("token", "") << "\n";
    return 0;
  });
}

}  // namespace

void RegisterUiLoginCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "ui-login", "open a dashboard session (e.g. as your MUNGE identity) and print its address");
  auto c = std::make_shared<UiLoginCommand>();
  AddConnectionFlags(cmd, c->connection);
  cmd->add_option("--ttl", c->ttl, "how long it lasts (default 12h, at most 7d)");
  cmd->callback([c, &exit_code] { exit_code = RunUiLogin(*c); });
}

}  // namespace sluice::cli
