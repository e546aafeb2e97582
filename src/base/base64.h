// Base64 (RFC 4648, standard alphabet, with padding): bytes that are not text (a step's output,
// a terminal's keystrokes) inside JSON messages (wire/step_stream.h).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sluice {

std::string Base64Encode(std::string_view bytes);
// nullopt for anything that is not padded standard base64 (a stray character, a bad length,
// bits set after the last byte); "" decodes to "".
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace sluice
