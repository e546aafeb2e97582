// InternedText: a string held once per process however many jobs carry it (issue 45). A
// million jobs of a few users, projects, accounts and queues would otherwise hold a million
// copies of the same short names (the core's JobSpec and the server's job record both hold
// them). Beside std::string's 32 bytes it takes 8.
//
// Representation: a pointer to an entry of one process-wide pool (a hash set of strings whose
// nodes never move and are never freed). The pool only grows: it holds every distinct value
// ever interned (users, queues, reservations; projects and accounts, which a client chooses:
// ever new ones grow it, a known limit); job names and commands are not interned.
// Invariants: two InternedText are equal exactly when their texts are (one entry per text),
// so comparing them compares pointers.
// Thread-safety: a text new to the calling thread takes the pool's mutex (a known one is found
// in the thread's own cache); an InternedText is immutable and may be read from any thread.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

class InternedText {
 public:
  // The empty text (shared by every default-constructed value, no pool entry).
  InternedText();
  // The pool's entry for `text` (added on first use). Implicit, as std::string's: a record's
  // member is set from any string (`spec.user = "alice"`, `.user = name`).
  InternedText(std::string_view text);                                             // NOLINT
  InternedText(const std::string& text) : InternedText(std::string_view(text)) {}  // NOLINT
  InternedText(const char* text) : InternedText(std::string_view(text)) {}         // NOLINT

  void clear() { text_ = InternedText().text_; }

  const std::string& str() const { return *text_; }
  operator const std::string&() const { return *text_; }  // NOLINT: reads as the string
  operator std::string_view() const { return *text_; }    // NOLINT: reads as the string
  bool empty() const { return text_->empty(); }
  size_t size() const { return text_->size(); }
  const char* c_str() const { return text_->c_str(); }

  friend bool operator==(InternedText a, InternedText b) { return a.text_ == b.text_; }
  friend bool operator==(InternedText a, std::string_view b) { return *a.text_ == b; }
  friend bool operator==(InternedText a, const std::string& b) { return *a.text_ == b; }
  friend bool operator==(InternedText a, const char* b) { return *a.text_ == b; }
  // Concatenation, as a std::string's (messages: "user " + spec.user).
  friend std::string operator+(std::string a, InternedText b) { return a += *b.text_; }
  friend std::string operator+(InternedText a, std::string_view b) {
    std::string out = *a.text_;
    return out += b;
  }
  // By text, not by entry: sorted containers and listings order names alphabetically.
  friend auto operator<=>(InternedText a, InternedText b) { return *a.text_ <=> *b.text_; }

 private:
  const std::string* text_;
};

// How many distinct texts the pool holds (tests; a diagnostic).
size_t InternedTextCount();

}  // namespace sluice
