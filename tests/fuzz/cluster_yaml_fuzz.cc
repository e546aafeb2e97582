// libFuzzer target for the cluster YAML loader (STYLE.md: fuzz the config parsers; SPEC §2).
//
// On every input it checks, beyond "no crash, no leak, no UB" (the sanitizers), that the loader
// keeps its contract (config/cluster_yaml.h): either a config that satisfies the SPEC §2
// checks, or an error whose message starts with `fuzz.yaml:<line>: ` with a 1-based line.
// A broken promise aborts through SLUICE_CHECK, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "base/check.h"
#include "base/status.h"
#include "config/cluster_yaml.h"
#include "core/model/config.h"

namespace {

using sluice::core::ClusterConfig;

constexpr std::string_view kFile = "fuzz.yaml";

void CheckErrorFormat(const sluice::Status& status) {
  SLUICE_CHECK(status.code() == sluice::StatusCode::kInvalidArgument ||
               status.code() == sluice::StatusCode::kResourceExhausted);
  const std::string& message = status.message();
  SLUICE_CHECK(message.starts_with(std::string(kFile) + ":"));
  size_t i = kFile.size() + 1;
  size_t digits = 0;
  while (i < message.size() && message[i] >= '0' && message[i] <= '9') {
    ++i;
    ++digits;
  }
  SLUICE_CHECK(digits > 0 && message[kFile.size() + 1] != '0');
  SLUICE_CHECK(message.compare(i, 2, ": ") == 0);
}

void CheckConfig(const ClusterConfig& config) {
  std::set<std::string> hosts;
  std::set<std::string> resources;
  for (const auto& host : config.hosts) {
    SLUICE_CHECK(hosts.insert(host.name).second);
    SLUICE_CHECK(host.slots >= 0);
    for (const auto& [name, amount] : host.resources) resources.insert(name);
  }
  for (const auto& [name, amount] : config.shared_resources) resources.insert(name);
  for (const auto& [group, members] : config.host_groups) {
    for (const auto& member : members) SLUICE_CHECK(hosts.contains(member));
  }
  SLUICE_CHECK(!config.queues.empty());
  std::set<std::string> queues;
  const bool capacities = config.queues.front().capacity.has_value();
  double sum = 0;
  for (const auto& queue : config.queues) {
    SLUICE_CHECK(queues.insert(queue.name).second);
    SLUICE_CHECK(queue.capacity.has_value() == capacities);
    const double capacity = queue.capacity.value_or(0);
    SLUICE_CHECK(capacity >= 0 && capacity <= queue.max_capacity && queue.max_capacity <= 100);
    SLUICE_CHECK(queue.user_limit_pct >= 0 && queue.user_limit_pct <= 100);
    SLUICE_CHECK(queue.host_group.empty() || config.host_groups.contains(queue.host_group));
    sum += capacity;
  }
  SLUICE_CHECK(sum <= 100 + 1e-9);
  SLUICE_CHECK(config.default_queue.empty() || queues.contains(config.default_queue));
  std::set<std::string> limits;
  for (const auto& limit : config.limits) {
    SLUICE_CHECK(limits.insert(limit.name).second);
    SLUICE_CHECK(limit.slots || limit.jobs || !limit.resources.empty());
    for (const auto& [name, amount] : limit.resources) SLUICE_CHECK(resources.contains(name));
    for (const auto& host : limit.hosts.names) SLUICE_CHECK(hosts.contains(host));
    for (const auto& queue : limit.queues.names) SLUICE_CHECK(queues.contains(queue));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sluice::Result<ClusterConfig> result = sluice::config::ParseClusterConfig(text, kFile);
  if (result.has_value()) {
    CheckConfig(*result);
  } else {
    CheckErrorFormat(result.error());
  }
  return 0;
}
