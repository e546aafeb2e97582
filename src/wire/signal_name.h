// The signals a user may send to a running job (`sluice cancel --signal`, `scancel -s`,
// `bkill -s`; issue 47). They travel by name, as LSF and Slurm print them: signal numbers
// differ between architectures (SIGUSR1 is 10 on x86 and arm, 16 on mips), so a number is
// only read where it was typed and turned into a name there.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::wire {

// "USR1", "SIGUSR1", "usr1" or a number of this machine ("10") -> the name without SIG
// ("USR1"). Errors: anything else, naming the signals accepted.
Result<std::string> CanonicalSignal(std::string_view text);

// As CanonicalSignal, but a name only (what the REST API accepts: a number there would be
// read with the controller's numbering, not the client's).
Result<std::string> CanonicalSignalName(std::string_view text);

// A canonical name ("USR1") -> this machine's number; nullopt for a name not accepted.
std::optional<int> SignalNumber(std::string_view name);

// The accepted names, for messages: "HUP, INT, ...".
std::string SignalNames();

}  // namespace sluice::wire
