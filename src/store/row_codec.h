// Rows as JSON text, for stores that keep values as bytes (etcd): one object per StoredJob
// and the decimal text of a setting. A job's row leaves out its spec, which the store keeps
// under a key of its own, written with the job's first row and again only when `modify`
// changes it (the row is rewritten at every state change; the spec was ~2/3 of its bytes),
// and every field at its default. Encode then Decode gives back an
// equal row but for the spec; optional fields absent stay absent (nullopt), and a field the
// row was written without (a default, or an older version) decodes to its default.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "base/status.h"
#include "store/store.h"

namespace sluice::store {

std::string EncodeJob(const StoredJob& job);
// `has_spec` (when given) tells whether the text carried the spec, as rows written before the
// spec had its own key do. Errors: kInternal naming `where` when the text is not a job row.
Result<StoredJob> DecodeJob(const std::string& text, const std::string& where,
                            bool* has_spec = nullptr);

}  // namespace sluice::store
