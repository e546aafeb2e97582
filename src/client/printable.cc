#include "client/printable.h"

#include <cstdio>

namespace sluice::client {
namespace {

std::string Escaped(std::string_view text, bool keep_layout) {
  std::string out;
  out.reserve(text.size());
  char buffer[8];
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (keep_layout && (c == '\n' || c == '\t')) {
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
      out += buffer;
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // U+0080..U+009F in UTF-8: the C1 controls (CSI is U+009B).
      std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out += buffer;
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string PrintableField(std::string_view text) { return Escaped(text, false); }

std::string PrintableText(std::string_view text) { return Escaped(text, true); }

}  // namespace sluice::client
