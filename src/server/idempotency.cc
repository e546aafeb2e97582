#include "server/idempotency.h"

#include <chrono>

#include "auth/digest.h"

namespace sluice::server {

using nlohmann::json;

Status IdempotencyKeys::CheckKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return InvalidArgument("Idempotency-Key: expected 1 to " + std::to_string(kMaxKeyBytes) +
                           " characters, got " + std::to_string(key.size()));
  }
  for (size_t i = 0; i < key.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(key[i]);
    if (c < 0x21 || c > 0x7e) {
      return InvalidArgument("Idempotency-Key: byte " + std::to_string(i) +
                             ": expected printable ASCII without spaces");
    }
  }
  return Status::Ok();
}

std::string IdempotencyKeys::Digest(const std::vector<json>& specs, bool batch) {
  std::string text = batch ? "batch:" : "job:";
  for (const json& spec : specs) {
    text += spec.dump(-1, ' ', false, json::error_handler_t::replace);
    text += '\n';
  }
  return auth::ToHex(auth::Sha256(text));
}

void IdempotencyKeys::Expire(Instant now) {
  while (!by_time_.empty() && by_time_.begin()->first + kTtlSeconds <= now) {
    const Id id = by_time_.begin()->second;
    auto it = entries_.find(id);
    if (it != entries_.end() && it->second.in_progress) break;  // settles soon; expires later
    Erase(id);
  }
}

void IdempotencyKeys::Erase(const Id& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  by_time_.erase({it->second.when, id});
  if (--per_user_[id.first] == 0) per_user_.erase(id.first);
  entries_.erase(it);
}

void IdempotencyKeys::Insert(const Id& id, Entry entry) {
  Erase(id);
  // Bounded per user: the user's oldest settled key goes first.
  if (per_user_[id.first] >= kMaxPerUser) {
    for (const auto& [when, other] : by_time_) {
      if (other.first == id.first && !entries_.at(other).in_progress) {
        Erase(Id(other));
        break;
      }
    }
  }
  by_time_.insert({entry.when, id});
  per_user_[id.first] += 1;
  entries_[id] = std::move(entry);
}

IdempotencyKeys::Lookup IdempotencyKeys::Find(const std::string& user, const std::string& key,
                                              const std::string& digest, Instant now) {
  Expire(now);
  auto it = entries_.find({user, key});
  if (it == entries_.end()) return {};
  const Entry& entry = it->second;
  if (entry.digest != digest) return {.found = Found::kMismatch, .when = entry.when};
  if (entry.in_progress) return {.found = Found::kInProgress, .when = entry.when};
  return {.found = Found::kDone, .ids = entry.ids, .when = entry.when};
}

void IdempotencyKeys::AwaitSettled(MutexLock& lock, const std::string& user,
                                   const std::string& key, int64_t timeout_ms) {
  settled_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    auto it = entries_.find({user, key});
    return it == entries_.end() || !it->second.in_progress;
  });
}

void IdempotencyKeys::Begin(const std::string& user, const std::string& key,
                            const std::string& digest, Instant now, std::vector<json>& specs) {
  Insert({user, key}, Entry{.digest = digest, .when = now, .in_progress = true});
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i]["idempotency"] = {
        {"key", key}, {"digest", digest}, {"index", i}, {"count", specs.size()}};
  }
}

void IdempotencyKeys::Finish(const std::string& user, const std::string& key,
                             std::vector<JobId> ids) {
  auto it = entries_.find({user, key});
  if (it != entries_.end()) {
    it->second.in_progress = false;
    it->second.ids = std::move(ids);
  }
  settled_cv_.notify_all();
}

void IdempotencyKeys::Abandon(const std::string& user, const std::string& key) {
  Erase({user, key});
  settled_cv_.notify_all();
}

// The ids of each (user, key) by their index in the submission; EndRestore keeps complete
// submissions only (retention may have deleted some of a batch).
void IdempotencyKeys::NoteRestored(JobId id, Instant submit_time, const std::string& user,
                                   const json& tag) {
  if (!tag.is_object() || !tag.value("key", json()).is_string() ||
      !tag.value("index", json()).is_number_unsigned() ||
      !tag.value("count", json()).is_number_unsigned()) {
    return;
  }
  const size_t index = tag["index"].get<size_t>();
  const size_t count = tag["count"].get<size_t>();
  if (index >= count) return;
  Entry& entry = restoring_[{user, tag["key"].get<std::string>()}];
  entry.digest = tag.value("digest", "");
  entry.when = submit_time;
  if (entry.ids.size() != count) entry.ids.assign(count, 0);
  entry.ids[index] = id;
}

void IdempotencyKeys::EndRestore() {
  for (auto& [id, entry] : restoring_) {
    bool complete = true;
    for (JobId job : entry.ids) complete = complete && job != 0;
    if (complete) Insert(id, std::move(entry));
  }
  restoring_.clear();
}

}  // namespace sluice::server
