// The configuration at a site (R-OPS-3, issue 43):
//   sluice config check FILE   validates a cluster YAML as the controller would load it: the
//                              file (errors name FILE:LINE and the field) and then the whole
//                              cluster (queues' hosts, limits, windows: the core's checks).
//                              Prints `FILE: ok: N hosts (S slots), Q queues`.
//   sluice admin reconfig      makes the controller reload its file now (as SIGHUP and
//                              systemd's ExecReload do); administrators only. A file with an
//                              error changes nothing and the error is printed.
// Exit codes: 0 ok; 1 the file cannot be read; 2 it is invalid (check), or the call failed
// (reconfig, client::ExitCodeFor).
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/rest_verbs.h"
#include "config/cluster_yaml.h"
#include "core/model/cluster_state.h"

namespace sluice::cli {
namespace {

int CheckConfig(const std::string& path) {
  config::AuthConfig auth;  // checked with the rest; its secrets are not printed
  Result<core::ClusterConfig> config = config::LoadClusterConfig(path, &auth);
  if (!config) {
    std::cerr << "error: " << config.error().message() << "\n";
    return config.error().code() == StatusCode::kNotFound ? 1 : 2;
  }
  Result<core::ClusterState> state = core::ClusterState::Create(*config);
  if (!state) {
    std::cerr << "error: " << path << ": " << state.error().message() << "\n";
    return 2;
  }
  std::cout << path << ": ok: " << config->hosts.size() << " hosts ("
            << state->topology().total_slots() << " slots), " << config->queues.size()
            << " queues\n";
  return 0;
}

}  // namespace

void RegisterConfigCommands(CLI::App& app, int& exit_code) {
  CLI::App* config = app.add_subcommand("config", "check a cluster YAML before a controller loads it");
  config->require_subcommand(1);
  CLI::App* check = config->add_subcommand(
      "check", "validate a cluster YAML as the controller loads it (exit 2 if invalid)");
  auto path = std::make_shared<std::string>();
  check->add_option("file", *path, "the cluster YAML")->required();
  check->callback([path, &exit_code] { exit_code = CheckConfig(*path); });

  CLI::App* admin = app.add_subcommand("admin", "controller administration; admins only");
  admin->require_subcommand(1);
  CLI::App* reconfig = admin->add_subcommand(
      "reconfig", "reload the controller's cluster YAML now, keeping every job (as SIGHUP)");
  // The connection flags are `admin`'s, so that they may come before or after the action.
  auto connection = std::make_shared<verbs::Connection>();
  verbs::AddConnectionFlags(admin, *connection);
  reconfig->fallthrough();
  reconfig->callback([connection, &exit_code] {
    exit_code = verbs::WithClient(*connection, [](client::RestClient& rest) {
      Result<nlohmann::json> reply = rest.Post("/v1/admin/reconfigure", nlohmann::json::object());
      if (!reply) return verbs::Fail(reply.error());
      std::cout << "configuration version " << reply->value("config_version", 0)
                << " in force\n";
      return 0;
    });
  });
}

}  // namespace sluice::cli
