// The options of an in-process `Server` for a test: the cluster YAML `yaml` written to
// DIR/cluster.yaml, the state in DIR/state, a free port on 127.0.0.1 and a logger that drops
// everything (the tests read replies, not logs).
#pragma once

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "server/server.h"

namespace sluice::server {

inline ServerOptions LoopbackOptions(const std::filesystem::path& dir, const std::string& yaml) {
  std::ofstream(dir / "cluster.yaml") << yaml;
  ServerOptions options{.config_path = (dir / "cluster.yaml").string(),
                        .state_dir = (dir / "state").string(),
                        .listen = "127.0.0.1:0"};
  options.log =
      std::make_shared<spdlog::logger>("quiet", std::make_shared<spdlog::sinks::null_sink_mt>());
  return options;
}

}  // namespace sluice::server
