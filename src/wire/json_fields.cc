#include "wire/json_fields.h"

#include <limits>

namespace sluice::wire::fields {

using nlohmann::json;

Status TypeError(const std::string& field, const char* expected) {
  return InvalidArgument(field + ": expected " + expected);
}

const json* Find(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

bool AsInt64(const json& value, int64_t& out) {
  if (!value.is_number_integer()) return false;
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return false;
  }
  out = value.get<int64_t>();
  return true;
}

Status ReadInt(const json& object, const char* key, const std::string& where, int64_t& out) {
  const json* value = Find(object, key);
  if (value == nullptr) return Status::Ok();
  if (!AsInt64(*value, out)) return TypeError(where + key, "an integer");
  return Status::Ok();
}

Status ReadString(const json& object, const char* key, const std::string& where, std::string& out) {
  const json* value = Find(object, key);
  if (value == nullptr) return Status::Ok();
  if (!value->is_string()) return TypeError(where + key, "a string");
  out = value->get<std::string>();
  return Status::Ok();
}

Status CheckFields(const json& body, const std::set<std::string>& known, const std::string& where) {
  if (!body.is_object()) return TypeError("body", "an object");
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (!known.contains(it.key())) return InvalidArgument(where + it.key() + ": unknown field");
  }
  return Status::Ok();
}

bool IsNonNegativeInt(const json& value, int64_t max) {
  if (!value.is_number_integer()) return false;
  if (value.is_number_unsigned()) return value.get<uint64_t>() <= static_cast<uint64_t>(max);
  return value.get<int64_t>() >= 0 && value.get<int64_t>() <= max;
}

}  // namespace sluice::wire::fields
