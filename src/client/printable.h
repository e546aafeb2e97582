// Text that users supplied (a job's name, command, paths, a message), made safe to print on
// another user's terminal (issue 48): a name with ESC [2J or an OSC sequence would clear or
// retitle the screen of whoever runs `sluice jobs -u all`. Control characters (C0, DEL and the
// C1 range U+0080..U+009F) become visible escapes (`\x1b`, `\u009b`); everything else,
// including other UTF-8, is kept. The result contains no control character, so applying it
// twice changes nothing.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace sluice::client {

// Every control character escaped: for one field of a table or a `Label: value` line.
std::string PrintableField(std::string_view text);

// The same, keeping newlines and tabs: for a whole formatted listing at the output.
std::string PrintableText(std::string_view text);

}  // namespace sluice::client
