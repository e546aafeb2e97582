// InternedText: a string held once per process however many jobs carry it (issue 45). A
// million jobs of a few users, accounts and queues would otherwise hold a million copies of
// the same short names.
//
// Representation: a pointer to an entry of one process-wide pool (a hash set of strings whose
// nodes never move and are never freed). The pool only grows: it holds the distinct values
// ever interned (users, accounts, queue names), a few thousand at most.
// Invariants: two InternedText are equal exactly when their texts are (one entry per text),
// so comparing them compares pointers.
// Thread-safety: Intern takes the pool's own mutex; an InternedText is immutable and may be
// read from any thread.
#pragma once

#include <string>
#include <string_view>

namespace sluice::server {

class InternedText {
 public:
  // The empty text (shared by every default-constructed value, no pool entry).
  InternedText();
  // The pool's entry for `text` (added on first use).
  explicit InternedText(std::string_view text);

  // The pool's entry for `text`, as the constructor (a record's member set from a string).
  InternedText& operator=(std::string_view text) { return *this = InternedText(text); }
  void clear() { text_ = InternedText().text_; }

  const std::string& str() const { return *text_; }
  operator const std::string&() const { return *text_; }  // NOLINT: reads as the string
  bool empty() const { return text_->empty(); }

  friend bool operator==(InternedText a, InternedText b) { return a.text_ == b.text_; }
  friend bool operator==(InternedText a, std::string_view b) { return *a.text_ == b; }

 private:
  const std::string* text_;
};

// How many distinct texts the pool holds (tests; a diagnostic).
size_t InternedTextCount();

}  // namespace sluice::server
