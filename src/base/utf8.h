// UTF-8 validity, byte by byte (RFC 3629; the well-formed sequences of table 3-7 of the
// Unicode standard: no overlongs, no surrogates, nothing above U+10FFFF). Used where text
// from the network or from jobs must be checked or cut without breaking a character.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace sluice {

// The length (1..4) of the well-formed UTF-8 sequence starting at text[i], or 0 when the
// bytes there are not one (also when the sequence is cut off by the end of `text`).
// REQUIRES: i < text.size().
size_t Utf8SequenceLength(std::string_view text, size_t i);

// The offset of the first byte that does not start a well-formed sequence, or npos.
size_t FirstInvalidUtf8(std::string_view text);

}  // namespace sluice
