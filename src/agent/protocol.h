// The agent's side of the controller protocol (docs/api.md, "Agents"): the register and
// heartbeat bodies it sends and the responses it reads, as plain structs with JSON converters.
//
// Parsing is lenient about extra fields (a newer controller may add some) and strict about
// the types of the fields it uses: a wrong type is kInvalidArgument naming the field, e.g.
// `launch[2].job: expected an integer`.
// Implements the message shapes of R-SRV-2/R-SRV-3. Thread-safety: value types only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/job_runner.h"
#include "base/status.h"

namespace sluice::agent {

struct HostSpec {
  std::string name;
  int slots = 0;
  std::map<std::string, double> resources;
  std::map<std::string, std::string> attributes;
  std::vector<std::string> tags;
};

struct RegisterReply {
  int64_t epoch = 0;
  int lease_seconds = 10;
  int heartbeat_ms = 500;
};

struct LaunchFailure {
  int64_t job = 0;
  std::string message;
};

struct Heartbeat {
  int64_t epoch = 0;
  int wait_ms = 0;
  std::vector<int64_t> running;
  std::vector<JobExit> exited;
  std::vector<LaunchFailure> launch_failed;
};

struct KillOrder {
  int64_t job = 0;
  int grace_seconds = 10;
};

struct HeartbeatReply {
  int64_t epoch = 0;
  std::vector<JobSpec> launch;
  std::vector<KillOrder> kill;
  std::vector<int64_t> ack;
};

nlohmann::json RegisterBody(const HostSpec& host, const std::vector<int64_t>& running,
                            int64_t epoch);
nlohmann::json HeartbeatBody(const Heartbeat& heartbeat);

Result<RegisterReply> ParseRegisterReply(const nlohmann::json& body);
// `default_cwd` is used for a launch whose cwd is empty.
Result<HeartbeatReply> ParseHeartbeatReply(const nlohmann::json& body,
                                           const std::string& default_cwd);

// "mem=64000,gpu=2" -> {mem: 64000, gpu: 2}; "type=linux,os=debian" for attributes.
Result<std::map<std::string, double>> ParseResourceList(const std::string& text);
Result<std::map<std::string, std::string>> ParseAttributeList(const std::string& text);

}  // namespace sluice::agent
