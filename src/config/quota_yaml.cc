#include "config/quota_yaml.h"

#include <vector>

namespace sluice::config::yaml {
namespace {

Status ReadQueueQuota(const Reader& reader, const Field& f, QueueQuota& quota) {
  if (!f.node.IsMap()) return reader.Expected(f, "a map (max_pending, max_pending_per_user)");
  Result<std::vector<Entry>> keys = reader.MapEntries(f);
  if (!keys) return keys.error();
  for (const Entry& k : *keys) {
    if (k.key == "max_pending") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadCount<int64_t>(k.value), quota.max_pending));
    } else if (k.key == "max_pending_per_user") {
      SLUICE_RETURN_IF_ERROR(
          Assign(reader.ReadCount<int64_t>(k.value), quota.max_pending_per_user));
    } else {
      return reader.Error(k.key_line, k.value.path, "unknown key");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ReadQuotas(const Reader& reader, const Field& f,
                  const std::set<std::string, std::less<>>& queues, Quotas& quotas) {
  if (!f.node.IsNull() && !f.node.IsMap()) {
    return reader.Expected(f, "a map (max_pending_per_user, max_array_elements_per_user, queues)");
  }
  Result<std::vector<Entry>> keys = reader.MapEntries(f);
  if (!keys) return keys.error();
  for (const Entry& k : *keys) {
    if (k.key == "max_pending_per_user") {
      SLUICE_RETURN_IF_ERROR(
          Assign(reader.ReadCount<int64_t>(k.value), quotas.max_pending_per_user));
    } else if (k.key == "max_array_elements_per_user") {
      Result<int64_t> count = reader.ReadCount<int64_t>(k.value);
      if (!count) return count.error();
      quotas.max_array_elements_per_user = *count;
    } else if (k.key == "queues") {
      Result<std::vector<Entry>> names = reader.MapEntries(k.value);
      if (!names) return names.error();
      for (const Entry& q : *names) {
        if (!queues.contains(q.key)) {
          return reader.Error(q.key_line, q.value.path, "no queue named " + Quote(q.key));
        }
        SLUICE_RETURN_IF_ERROR(ReadQueueQuota(reader, q.value, quotas.queues[q.key]));
      }
    } else {
      return reader.Error(k.key_line, k.value.path, "unknown key");
    }
  }
  return Status::Ok();
}

}  // namespace sluice::config::yaml
