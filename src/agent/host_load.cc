#include "agent/host_load.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace sluice::agent {

std::optional<wire::HostLoad> ReadHostLoad(const std::string& proc) {
  std::ifstream loadavg(proc + "/loadavg");
  wire::HostLoad load;
  if (!(loadavg >> load.r1m >> load.r5m >> load.r15m)) return std::nullopt;
  for (double v : {load.r1m, load.r5m, load.r15m}) {
    if (!std::isfinite(v) || v < 0) return std::nullopt;
  }
  std::ifstream meminfo(proc + "/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    // "MemAvailable:   12345678 kB"
    if (!line.starts_with("MemAvailable:")) continue;
    std::istringstream in(line.substr(13));
    int64_t kb = 0;
    if (in >> kb && kb >= 0) load.mem_available_mb = kb / 1024;
    break;
  }
  return load;
}

}  // namespace sluice::agent
