#include "config/reservation_policy_yaml.h"

#include "config/health_yaml.h"

namespace sluice::config::yaml {
namespace {

constexpr Duration kMaxReservationDuration = 366 * 86400;

Status ReadUserReservations(const Reader& reader, const Field& f, UserReservationPolicy& policy) {
  if (!f.node.IsNull() && !f.node.IsMap()) {
    return reader.Expected(f, "a map (max_hosts, max_duration, users, groups)");
  }
  Result<std::vector<Entry>> keys = reader.MapEntries(f);
  if (!keys) return keys.error();
  policy.enabled = true;
  for (const Entry& k : *keys) {
    if (k.key == "max_hosts") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadInt<int64_t>(k.value, 1), policy.max_hosts));
    } else if (k.key == "max_duration") {
      SLUICE_RETURN_IF_ERROR(
          Assign(ReadDuration(reader, k.value, 1, kMaxReservationDuration), policy.max_duration));
    } else if (k.key == "users") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadNameList(k.value), policy.users));
    } else if (k.key == "groups") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadNameList(k.value), policy.groups));
    } else {
      return reader.Error(k.key_line, k.value.path,
                          "unknown key (max_hosts, max_duration, users, groups)");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ReadReservationPolicy(const Reader& reader, const Field& f, UserReservationPolicy& policy) {
  if (!f.node.IsNull() && !f.node.IsMap()) return reader.Expected(f, "a map (user_reservations)");
  Result<std::vector<Entry>> keys = reader.MapEntries(f);
  if (!keys) return keys.error();
  for (const Entry& k : *keys) {
    if (k.key != "user_reservations") {
      return reader.Error(k.key_line, k.value.path, "unknown key (user_reservations)");
    }
    SLUICE_RETURN_IF_ERROR(ReadUserReservations(reader, k.value, policy));
  }
  return Status::Ok();
}

}  // namespace sluice::config::yaml
