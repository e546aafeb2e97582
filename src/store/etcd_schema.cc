#include "store/etcd_schema.h"

#include <charconv>
#include <iterator>
#include <optional>

namespace sluice::store {
namespace {

// One step of the layout under PREFIX: from `to - 1` to `to`.
struct EtcdMigration {
  int to;
  std::vector<EtcdOp> (*ops)(const std::string& prefix);
};

// In version order; the last one's `to` is kSchemaVersion.
constexpr EtcdMigration kMigrations[] = {
    // 1 -> 2: the keys did not change; the step only records the version (the first mark).
    {2, [](const std::string&) { return std::vector<EtcdOp>{}; }},
    // 2 -> 3: advance reservations under PREFIX/reservations/NAME (issue 42); a new prefix holds
    // none yet, so the step only records that an older binary must not lead this state (it
    // would drop them).
    {3, [](const std::string&) { return std::vector<EtcdOp>{}; }},
};
static_assert(std::size(kMigrations) > 0 &&
              kMigrations[std::size(kMigrations) - 1].to == kSchemaVersion);

std::string MarkKey(const std::string& prefix) { return prefix + "/meta/schema_version"; }

// Whether any key under the prefix holds state: anything but the election's keys
// (meta/leader, meta/written, meta/heard/*), which every candidate's campaign puts.
Result<bool> HoldsState(EtcdClient& client, const std::string& prefix) {
  const std::string base = prefix + "/";
  const std::string meta = prefix + "/meta/";
  // [base, meta/) holds hosts/ and jobs/; meta/config_version; (meta/ + 1, end) settings/, specs/.
  const std::pair<std::string, std::string> ranges[] = {
      {base, meta}, {meta + "config_version", ""}, {PrefixRangeEnd(meta), PrefixRangeEnd(base)}};
  for (const auto& [from, to] : ranges) {
    Result<EtcdRange> range = client.Range(from, to, 1, 0);
    if (!range) return range.error();
    if (!range->kvs.empty()) return true;
  }
  return false;
}

// Puts the mark `to` (with `ops`) if the mark is still `from` (nullopt: absent) and the fence
// holds.
Status PutMark(EtcdClient& client, const std::string& prefix, const std::vector<EtcdCompare>& fence,
               std::optional<int> from, int to, std::vector<EtcdOp> ops, const std::string& where) {
  std::vector<EtcdCompare> compares = fence;
  if (from) {
    compares.push_back({.key = MarkKey(prefix),
                        .target = EtcdCompare::Target::kValue,
                        .value = std::to_string(*from)});
  } else {
    compares.push_back({.key = MarkKey(prefix), .target = EtcdCompare::Target::kCreate});
  }
  ops.push_back({.key = MarkKey(prefix), .value = std::to_string(to)});
  Result<EtcdTxnResult> txn = client.Txn(compares, ops, "");
  if (!txn) return txn.error();
  if (!txn->succeeded) {
    return FailedPrecondition(where + ": schema version " + std::to_string(to) +
                              " not recorded: this controller lost the lead, or another " +
                              "changed the version meanwhile");
  }
  return Status::Ok();
}

}  // namespace

Result<SchemaOpened> OpenEtcdSchema(EtcdClient& client, const std::string& prefix,
                                    const std::vector<EtcdCompare>& fence,
                                    const std::string& where) {
  Result<EtcdRange> mark = client.Range(MarkKey(prefix), "", 1, 0);
  if (!mark) return mark.error();
  std::optional<int> found;
  if (!mark->kvs.empty()) {
    const std::string& text = mark->kvs.front().value;
    int version = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
    if (ec != std::errc() || end != text.data() + text.size() || version < kUnmarkedSchemaVersion) {
      return Internal(where + ": " + MarkKey(prefix) + ": expected a schema version, got '" + text +
                      "'");
    }
    if (version > kSchemaVersion) return NewerSchemaError(where, version);
    found = version;
  }
  if (found == kSchemaVersion) return SchemaOpened{};
  if (!found) {
    Result<bool> holds = HoldsState(client, prefix);
    if (!holds) return holds.error();
    if (!*holds) {  // a new prefix: created at this version
      SLUICE_RETURN_IF_ERROR(
          PutMark(client, prefix, fence, std::nullopt, kSchemaVersion, {}, where));
      return SchemaOpened{};
    }
  }
  std::optional<int> at = found;  // the mark as stored (nullopt: none)
  for (const EtcdMigration& migration : kMigrations) {
    if (migration.to <= found.value_or(kUnmarkedSchemaVersion)) continue;
    SLUICE_RETURN_IF_ERROR(
        PutMark(client, prefix, fence, at, migration.to, migration.ops(prefix), where));
    at = migration.to;
  }
  return SchemaOpened{.found = found.value_or(kUnmarkedSchemaVersion)};
}

}  // namespace sluice::store
