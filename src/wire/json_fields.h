// Reading the members of a JSON message strictly, as the agent protocol and the records the
// controller stores do: each error names the field ("where" + key) and what was expected, e.g.
// `gpus.devices[1].numa: expected a NUMA node (-1: unknown)`. Absent and null members leave
// the output as it was. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/status.h"

namespace sluice::wire::fields {

// kInvalidArgument "<field>: expected <expected>".
Status TypeError(const std::string& field, const char* expected);
// The value of `key`, or nullptr when absent or null.
const nlohmann::json* Find(const nlohmann::json& object, const char* key);
// An integer that fits int64_t (an unsigned value above 2^63-1 would wrap).
bool AsInt64(const nlohmann::json& value, int64_t& out);
// An integer 0..max.
bool IsNonNegativeInt(const nlohmann::json& value, int64_t max);
Status ReadInt(const nlohmann::json& object, const char* key, const std::string& where,
               int64_t& out);
Status ReadString(const nlohmann::json& object, const char* key, const std::string& where,
                  std::string& out);
// Every member of `body` is in `known`; `where` prefixes a member's name in the error ("load."
// for a member of the heartbeat's load).
Status CheckFields(const nlohmann::json& body, const std::set<std::string>& known,
                   const std::string& where = "");

}  // namespace sluice::wire::fields
