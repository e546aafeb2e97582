#include "base/json_text.h"

#include <cstdio>

namespace sluice {

void AppendJsonString(std::string_view text, std::string& out) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else {
          out += c;  // UTF-8 passes through (every stored string came from parsed JSON)
        }
    }
  }
  out += '"';
}

void AppendJsonKey(std::string_view name, std::string& out) {
  out += '"';
  out += name;
  out += "\":";
}

}  // namespace sluice
