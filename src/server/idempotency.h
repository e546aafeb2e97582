// IdempotencyKeys: submissions that a client may repeat without running anything twice
// (issue 19, "Exactly once"). POST /v1/jobs and /v1/jobs/batch take an `Idempotency-Key`
// header; a repeat of a submission with the same key (same user) answers the original result
// (the same job ids) instead of submitting again; the same key with a different body is
// refused (422).
//
// Representation: each job of a keyed submission carries its key in its stored spec
// (`"idempotency": {"key", "digest", "index", "count"}`), written in the same transaction as
// the job, so a key is exactly as durable as its submission: a retry after a controller
// restart still finds it (Restore reads the rows back). In memory: one entry per (user, key)
// with the request's digest (SHA-256 of the normalized specs) and its ids, plus an order by
// time for expiry.
// Invariants:
//  - an entry lives kTtlSeconds from its submission, and a user keeps at most kMaxPerUser
//    (the oldest go first); an expired key is a new key;
//  - an entry is "in progress" from Begin to Finish/Abandon (the lock is released while the
//    submission commits): a repeat meanwhile waits for it (AwaitSettled);
//  - a submission that was not acknowledged (refused, or its write failed) leaves no entry.
// Thread-safety: REQUIRES the context's mutex held for every call (AwaitSettled waits on it).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "base/mutex.h"
#include "base/status.h"
#include "base/time.h"
#include "store/store.h"

namespace sluice::server {

class IdempotencyKeys {
 public:
  static constexpr int64_t kTtlSeconds = 24 * 3600;
  static constexpr size_t kMaxPerUser = 10'000;
  static constexpr size_t kMaxKeyBytes = 200;

  // A header value: 1 to kMaxKeyBytes printable ASCII characters. Errors: kInvalidArgument
  // naming the header.
  static Status CheckKey(std::string_view key);
  // The digest of a submission (its normalized specs, and whether it is a batch), hex.
  static std::string Digest(const std::vector<nlohmann::json>& specs, bool batch);

  enum class Found { kNone, kDone, kInProgress, kMismatch };
  struct Lookup {
    Found found = Found::kNone;
    std::vector<JobId> ids;  // kDone: the original submission's ids
    Instant when = 0;        // kDone, kMismatch: when the key was first used
  };
  Lookup Find(const std::string& user, const std::string& key, const std::string& digest,
              Instant now);
  // Waits (releasing `lock`) while the key is in progress, at most `timeout_ms`.
  void AwaitSettled(MutexLock& lock, const std::string& user,
                    const std::string& key, int64_t timeout_ms);

  // Marks the key in progress and tags each spec with it (the tag is stored with the job).
  void Begin(const std::string& user, const std::string& key, const std::string& digest,
             Instant now, std::vector<nlohmann::json>& specs);
  // The submission was acknowledged with `ids` / was not: the key is remembered / forgotten.
  void Finish(const std::string& user, const std::string& key, std::vector<JobId> ids);
  void Abandon(const std::string& user, const std::string& key);

  // A restart rebuilds the entries: NoteRestored for each stored job submitted within
  // kTtlSeconds whose spec carries a tag (`tag`, its spec's `user`), in id order; then
  // EndRestore keeps the submissions whose every job was noted.
  void NoteRestored(JobId id, Instant submit_time, const std::string& user,
                    const nlohmann::json& tag);
  void EndRestore();

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string digest;
    Instant when = 0;
    bool in_progress = false;
    std::vector<JobId> ids;
  };
  using Id = std::pair<std::string, std::string>;  // (user, key)

  void Expire(Instant now);
  void Insert(const Id& id, Entry entry);
  void Erase(const Id& id);

  std::map<Id, Entry> entries_;
  std::set<std::pair<Instant, Id>> by_time_;
  std::map<std::string, size_t> per_user_;
  std::condition_variable_any settled_cv_;
  std::map<Id, Entry> restoring_;  // NoteRestored's, until EndRestore
};

}  // namespace sluice::server
