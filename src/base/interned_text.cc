#include "base/interned_text.h"

#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace sluice {
namespace {

// Process-wide, never destroyed: a job's record may be read by a listing thread until exit.
struct Pool {
  std::mutex mu;
  std::unordered_set<std::string> texts;  // nodes are stable: entries never move
};

Pool& ThePool() {
  static Pool* pool = new Pool();
  return *pool;
}

// This thread's view of the entries it looked up: a known text is found without the pool's
// lock (a restart or a trace replay interns a few names for every job, a million times).
// Never stale: entries never move and are never freed.
std::unordered_map<std::string_view, const std::string*>& SeenByThisThread() {
  thread_local std::unordered_map<std::string_view, const std::string*> seen;
  return seen;
}

const std::string& EmptyText() {
  static const std::string* empty = new std::string();
  return *empty;
}

}  // namespace

InternedText::InternedText() : text_(&EmptyText()) {}

InternedText::InternedText(std::string_view text) : text_(&EmptyText()) {
  if (text.empty()) return;
  auto& seen = SeenByThisThread();
  if (auto it = seen.find(text); it != seen.end()) {
    text_ = it->second;
    return;
  }
  Pool& pool = ThePool();
  {
    std::lock_guard lock(pool.mu);
    text_ = &*pool.texts.emplace(text).first;
  }
  seen.emplace(*text_, text_);
}

size_t InternedTextCount() {
  Pool& pool = ThePool();
  std::lock_guard lock(pool.mu);
  return pool.texts.size();
}

}  // namespace sluice
