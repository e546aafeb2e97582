// JSON text written by hand where building a nlohmann::json tree first would cost more than
// the text (job lists, store rows): strings quoted and escaped.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// Appends `text` as a JSON string (quoted and escaped). UTF-8 passes through unchanged: every
// string given here came from parsed JSON or from checked input (base/utf8.h).
void AppendJsonString(std::string_view text, std::string& out);

// Appends `"name":`, an object member's name (`name` needs no escaping: a field name).
void AppendJsonKey(std::string_view name, std::string& out);

}  // namespace sluice
