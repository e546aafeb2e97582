// JobRow: a job's stored row as the controller keeps it in memory (issue 45), and SparseText,
// the 8-byte text most jobs leave empty.
//
// Representation: the members of store::StoredJob, less the two JobInfo spells as enums
// (state, phase: JobInfo::state(), phase()), with the admission policy interned (a few
// distinct values) and the texts only started, ended or changed jobs carry (cause,
// allocation, message, array states, steps, events) as SparseText: a null pointer while
// empty, so a pending job pays 8 bytes for each instead of a 32-byte std::string. The spec's
// text is a SparseText too: on a store that serves specs (SQLite) the record drops it once
// stored (job_book.h); the optional numbers are PackedOptional (8 bytes, not 16). A pending
// job's row is 200 bytes instead of StoredJob's 488.
// JobInfo::Stored() spells it back for the store; JobRow::From takes a stored row apart at a
// restart.
// Invariants: a SparseText holds no empty string (empty is the null pointer).
// Thread-safety: plain values, guarded by their owner's lock.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/ids.h"
#include "base/interned_text.h"
#include "base/packed_optional.h"
#include "store/store.h"

namespace sluice::server {

class SparseText {
 public:
  SparseText() = default;
  // Takes `text`, its capacity trimmed to its size (a dumped spec is grown by doubling).
  explicit SparseText(std::string text) {
    text.shrink_to_fit();
    *this = std::move(text);
  }
  SparseText(const SparseText& other) { *this = other.str(); }
  SparseText(SparseText&&) noexcept = default;
  SparseText& operator=(const SparseText& other) {
    if (this != &other) *this = other.str();
    return *this;
  }
  SparseText& operator=(SparseText&&) noexcept = default;
  // Reads as a std::string wherever one is expected (callers written for StoredJob's members).
  SparseText& operator=(std::string text) {
    if (text.empty()) {
      text_.reset();
    } else if (text_) {
      *text_ = std::move(text);
    } else {
      text_ = std::make_unique<std::string>(std::move(text));
    }
    return *this;
  }
  SparseText& operator=(const char* text) { return *this = std::string(text); }

  const std::string& str() const { return text_ ? *text_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT: reads as the string
  bool empty() const { return !text_; }
  void clear() { text_.reset(); }
  // Takes the text out (the store's row), leaving this empty.
  std::string Release() {
    std::string out = text_ ? std::move(*text_) : std::string();
    text_.reset();
    return out;
  }

  friend bool operator==(const SparseText& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const SparseText& a, const SparseText& b) { return a.str() == b.str(); }
  friend std::string operator+(std::string_view a, const SparseText& b) {
    std::string out(a);
    return out += b.str();
  }
  friend std::string operator+(const SparseText& a, std::string_view b) {
    std::string out(a.str());
    return out.append(b);
  }

 private:
  static const std::string& Empty() {
    static const std::string* empty = new std::string();
    return *empty;
  }
  std::unique_ptr<std::string> text_;
};

struct JobRow {
  JobId id = 0;
  // The submission as JSON (see StoredJob::spec). On a store that serves specs it is kept only
  // until a write carrying it committed (JobBook::SpecsStored), then read from the store
  // (JobBook::SpecText); an array's record keeps its own.
  SparseText spec;
  uint64_t seq = 0;
  int64_t submit_time = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  uint64_t start_seq = 0;
  int64_t enqueue_time = 0;
  uint64_t epoch = 0;
  JobId preempted_for = 0;
  int64_t preempt_kill_at = 0;
  std::optional<int32_t> exit_code;
  // 8 bytes each instead of std::optional's 16 (packed_optional.h).
  PackedOptional<int64_t> first_blocked;
  PackedOptional<int64_t> gate_since;
  PackedOptional<double> cpu_seconds;
  PackedOptional<double> max_rss_mb;
  int32_t bypass_count = 0;
  int32_t dispatch_attempts = 0;
  bool cancel_requested = false;
  InternedText policy;
  SparseText cause;
  SparseText allocation;
  SparseText message;
  SparseText array_states;
  SparseText steps;
  SparseText events;

  // The row of `stored` (moved from; its state and phase are the caller's to read first).
  static JobRow From(store::StoredJob&& stored);
  // The stored row, with `state` and `phase` spelled by the caller.
  store::StoredJob Stored(std::string_view state, std::string_view phase) const;
};

}  // namespace sluice::server

template <>
struct fmt::formatter<sluice::server::SparseText> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const sluice::server::SparseText& text, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(text.str(), ctx);
  }
};
