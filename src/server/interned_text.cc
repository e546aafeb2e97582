#include "server/interned_text.h"

#include <mutex>
#include <unordered_set>

namespace sluice::server {
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

const std::string& EmptyText() {
  static const std::string* empty = new std::string();
  return *empty;
}

}  // namespace

InternedText::InternedText() : text_(&EmptyText()) {}

InternedText::InternedText(std::string_view text) : text_(&EmptyText()) {
  if (text.empty()) return;
  Pool& pool = ThePool();
  std::lock_guard lock(pool.mu);
  text_ = &*pool.texts.emplace(text).first;
}

size_t InternedTextCount() {
  Pool& pool = ThePool();
  std::lock_guard lock(pool.mu);
  return pool.texts.size();
}

}  // namespace sluice::server
