// Rows as JSON text, for stores that keep values as bytes (etcd): one object per StoredJob
// and the decimal text of a setting. Encode then Decode gives back an equal row; optional
// fields absent stay absent (nullopt), and a field the row was written without (an older
// version) decodes to its default.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "base/status.h"
#include "store/store.h"

namespace sluice::store {

std::string EncodeJob(const StoredJob& job);
// Errors: kInternal naming `where` when the text is not a job row.
Result<StoredJob> DecodeJob(const std::string& text, const std::string& where);

}  // namespace sluice::store
