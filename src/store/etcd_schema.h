// The etcd store's schema version and its migrations (store/schema_version.h, R-OPS-5).
//
// Representation: the key PREFIX/meta/schema_version, decimal, put in a txn under the leader's
// fence: by the first leader of a new prefix (a prefix with no key but the election's), and
// by each migration's txn together with that step's changes. A prefix with keys and no mark is
// kUnmarkedSchemaVersion.
// Only the leader migrates: every txn here carries the leader's fence (its compares), so a
// deposed leader changes nothing; a leader whose binary is older than the state refuses to
// lead it (NewerSchemaError) and changes nothing. The history is kept in the same keys
// (docs/api.md): this version covers it.
// Thread-safety: the client's (one thread).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "store/etcd_client.h"
#include "store/schema_version.h"

namespace sluice::store {

// Reads the schema version under `prefix`, refuses a newer one and upgrades an older one in
// place, each migration in one txn with `fence` and a compare on the mark as read (so it
// applies once). `where` names the state in messages ("etcd prefix /sluice of URL").
// Errors: NewerSchemaError (nothing changed); kFailedPrecondition when a txn's compares fail
// (this leader was deposed, or another upgraded meanwhile); kInternal for a mark that is not
// a version; the client's errors.
Result<SchemaOpened> OpenEtcdSchema(EtcdClient& client, const std::string& prefix,
                                    const std::vector<EtcdCompare>& fence,
                                    const std::string& where);

}  // namespace sluice::store
