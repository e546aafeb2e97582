// The version of the stores' layout (R-OPS-5): how a state directory or an etcd prefix holds
// the controller's state. Both stores record it (SQLite: the `meta` row `schema_version`,
// store/sqlite_schema.h; etcd: the key PREFIX/meta/schema_version, store/etcd_schema.h) and
// check it when they open, before anything reads the state:
//  - a state of kSchemaVersion opens as it is;
//  - an older one is upgraded in place by the store's migrations, in order, each in one
//    transaction that also stamps the version it reaches (a crash between two leaves a state
//    of the earlier one, upgraded again at the next open);
//  - a newer one is refused (NewerSchemaError) and nothing is changed.
// A state without a mark is kUnmarkedSchemaVersion: the layout of the releases before the mark.
// Schema history (keep it in step with the migrations and docs/upgrading.md):
//   1  no mark: the layout up to commit bd2dd27 (tests/fixtures/state-v1 keeps one);
//   2  the same layout, with its version recorded;
//   3  advance reservations (issue 42): SQLite's table `reservations`, etcd's keys
//      PREFIX/reservations/NAME.
// Thread-safety: constants and a pure function.
#pragma once

#include <string>

#include "base/status.h"

namespace sluice::store {

inline constexpr int kSchemaVersion = 3;
inline constexpr int kUnmarkedSchemaVersion = 1;

// The version a store found when it opened, and whether it upgraded it.
struct SchemaOpened {
  int found = kSchemaVersion;  // before any upgrade; a new state counts as kSchemaVersion
  bool upgraded() const { return found != kSchemaVersion; }
};

// kFailedPrecondition naming the state (`where`: "state directory DIR", "etcd prefix P of
// URL"), its version `found` and this binary's, e.g. "state directory /var/lib/sluice/server
// has schema version 3, newer than this sluice's 2: it was written by a newer release; run
// that release (an older binary must not change it)".
Status NewerSchemaError(const std::string& where, int found);

}  // namespace sluice::store
