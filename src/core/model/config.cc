#include "core/model/config.h"

#include <string>

namespace sluice::core {

std::string_view ToString(HostState state) {
  switch (state) {
    case HostState::kOk:
      return "ok";
    case HostState::kClosed:
      return "closed";
    case HostState::kUnavail:
      return "unavail";
    case HostState::kDraining:
      return "draining";
  }
  return "unknown";
}

std::optional<HostState> ParseHostState(std::string_view text) {
  for (HostState s :
       {HostState::kOk, HostState::kClosed, HostState::kUnavail, HostState::kDraining}) {
    if (ToString(s) == text) return s;
  }
  return std::nullopt;
}

std::string_view ToString(PolicyKind policy) {
  switch (policy) {
    case PolicyKind::kFifo:
      return "fifo";
    case PolicyKind::kBoundedBackfill:
      return "bounded_backfill";
    case PolicyKind::kEasyBackfill:
      return "easy_backfill";
    case PolicyKind::kPredictiveBackfill:
      return "predictive_backfill";
  }
  return "unknown";
}

std::optional<PolicyKind> ParsePolicyKind(std::string_view text) {
  for (PolicyKind p : {PolicyKind::kFifo, PolicyKind::kBoundedBackfill, PolicyKind::kEasyBackfill,
                       PolicyKind::kPredictiveBackfill}) {
    if (ToString(p) == text) return p;
  }
  return std::nullopt;
}

std::string_view ToString(OnHostLoss action) {
  switch (action) {
    case OnHostLoss::kRequeue:
      return "requeue";
    case OnHostLoss::kExit:
      return "exit";
  }
  return "unknown";
}

std::optional<OnHostLoss> ParseOnHostLoss(std::string_view text) {
  for (OnHostLoss action : {OnHostLoss::kRequeue, OnHostLoss::kExit}) {
    if (ToString(action) == text) return action;
  }
  return std::nullopt;
}

ClusterConfig UniformCluster(int32_t hosts, int32_t slots) {
  ClusterConfig config;
  const size_t width = std::to_string(hosts).size();
  config.hosts.reserve(hosts);
  for (int32_t i = 1; i <= hosts; ++i) {
    std::string number = std::to_string(i);
    HostSpec host;
    host.name = "h" + std::string(width - number.size(), '0') + number;
    host.slots = slots;
    config.hosts.push_back(std::move(host));
  }
  QueueSpec queue;
  queue.name = "normal";
  config.queues.push_back(queue);
  return config;
}

}  // namespace sluice::core
