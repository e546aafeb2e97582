// `sluice resreq check 'REQUEST' [--config cluster.yaml]`: parses a resource request (SPEC §3)
// and prints its normalized form, so users can test a request before submitting it.
//
// Implements the CLI part of R-RR-5. With --config, the request's names are also checked
// against that cluster's host and shared resources (resreq::Validate).
// Output: the normalized request and a newline on stdout (an empty line for the empty
// request). Errors on stderr as `error: column N: found X, expected Y` (syntax) or
// `error: <what is wrong and how to fix it>` (meaning, config).
// Exit codes: 0 ok, 1 the config file cannot be read, 2 the request (or the config) is invalid.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "config/cluster_yaml.h"
#include "core/model/request_catalog.h"
#include "core/resreq/parser.h"
#include "core/resreq/request.h"
#include "core/resreq/validate.h"

namespace sluice::cli {
namespace {

struct CheckFlags {
  std::string request;
  std::string config;  // empty: syntax only
};

int RunCheck(const CheckFlags& flags) {
  core::resreq::ExprPool pool;
  Result<core::resreq::Request> request = core::resreq::Parse(flags.request, pool);
  if (!request) {
    std::cerr << "error: " << request.error().message() << "\n";
    return 2;
  }
  if (!flags.config.empty()) {
    Result<core::ClusterConfig> config = config::LoadClusterConfig(flags.config);
    if (!config) {
      std::cerr << "error: " << config.error().message() << "\n";
      return config.error().code() == StatusCode::kNotFound ? 1 : 2;
    }
    const Status valid = core::resreq::Validate(*request, pool, core::ResourceCatalogOf(*config));
    if (!valid.ok()) {
      std::cerr << "error: " << valid.message() << "\n";
      return 2;
    }
  }
  std::cout << core::resreq::Normalize(*request, pool) << "\n";
  return 0;
}

}  // namespace

void RegisterResreqCommand(CLI::App& app, int& exit_code) {
  CLI::App* resreq = app.add_subcommand("resreq", "work with resource request strings");
  resreq->require_subcommand(1);
  CLI::App* check = resreq->add_subcommand(
      "check", "parse a resource request and print its normalized form (exit 2 if invalid)");
  auto flags = std::make_shared<CheckFlags>();
  check
      ->add_option("request", flags->request,
                   "the request, e.g. 'select[type==linux && mem>4000] rusage[mem=4000]'")
      ->required();
  check->add_option("--config", flags->config,
                    "cluster YAML: also check the request's names against its resources");
  check->callback([flags, &exit_code] { exit_code = RunCheck(*flags); });
}

}  // namespace sluice::cli
