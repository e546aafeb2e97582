#include "server/fixed_text_pool.h"

#include <mutex>
#include <string_view>
#include <unordered_map>

#include "wire/job_json.h"

namespace sluice::server {
namespace {

struct Entry {
  const std::string* text;  // the copy the key views (identifies it for its deleter)
  std::weak_ptr<const std::string> copy;
};

// Process-wide, never destroyed: a copy may be dropped by a listing thread until exit.
struct Pool {
  std::mutex mu;
  std::unordered_map<std::string_view, Entry> texts;  // keys view their entry's text
};

Pool& ThePool() {
  static Pool* pool = new Pool();
  return *pool;
}

// Drops the entry of `text` (unless a newer copy of the same text replaced it) and frees it.
void Release(const std::string* text) {
  Pool& pool = ThePool();
  {
    std::lock_guard lock(pool.mu);
    auto it = pool.texts.find(*text);
    if (it != pool.texts.end() && it->second.text == text) pool.texts.erase(it);
  }
  delete text;
}

}  // namespace

std::shared_ptr<const std::string> SharedFixedText(const nlohmann::json& spec) {
  std::shared_ptr<const std::string> made = wire::FixedJobText(spec);
  Pool& pool = ThePool();
  std::lock_guard lock(pool.mu);
  auto it = pool.texts.find(*made);
  if (it != pool.texts.end()) {
    if (std::shared_ptr<const std::string> held = it->second.copy.lock()) return held;
    // Its last holder is being dropped (its deleter waits for the mutex): replace it.
    pool.texts.erase(it);
  }
  const std::string* text = new std::string(*made);
  std::shared_ptr<const std::string> copy(text, Release);
  pool.texts.emplace(std::string_view(*text), Entry{text, copy});
  return copy;
}

size_t SharedFixedTextCount() {
  Pool& pool = ThePool();
  std::lock_guard lock(pool.mu);
  return pool.texts.size();
}

}  // namespace sluice::server
