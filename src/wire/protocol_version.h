// The version of Sluice's wire formats (R-OPS-5): one MAJOR.MINOR for the REST API (what the
// CLI and the client library send) and the agent protocol, stated in one place, here.
//
// Rules: a new minor only adds (fields, routes, values) and still reads what the previous
// minor sends; a new major may change or drop. Every request carries the sender's version in
// the header `Sluice-Protocol: MAJOR.MINOR`; the controller states its own in the same header
// on every reply and in the agents' registration reply ("protocol"). A request without the
// header is kUnversionedProtocol: the releases before the header (today's agents and CLIs).
// The controller serves its own major from the previous minor on (minor >= its minor - 1,
// so agents and CLIs of the previous release keep working while it is upgraded) and newer
// minors of its major (agents and CLIs upgraded first cope with an older controller's
// answers). Anything else is refused before any other check: HTTP 400 with the body
// ProtocolRefusalBody, which the agent recognises (IsProtocolRefusal) and the CLI prints.
// History: 1.0 no header (up to commit bd2dd27); 1.1 the header and the registration
// reply's "protocol" (docs/upgrading.md).
// Thread-safety: constants and pure functions.
#pragma once

#include <compare>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::wire {

struct ProtocolVersion {
  int major = 0;
  int minor = 0;
  friend auto operator<=>(const ProtocolVersion&, const ProtocolVersion&) = default;
};

inline constexpr ProtocolVersion kProtocolVersion{1, 1};
inline constexpr ProtocolVersion kUnversionedProtocol{1, 0};
inline constexpr char kProtocolHeader[] = "Sluice-Protocol";

std::string ToString(ProtocolVersion version);

// "MAJOR.MINOR", each 0..9999. Errors: kInvalidArgument "Sluice-Protocol: expected
// MAJOR.MINOR, got '...'".
Result<ProtocolVersion> ParseProtocolVersion(std::string_view text);

// Whether a controller speaking `ours` serves a peer speaking `peer` (the rules above): Ok,
// or kFailedPrecondition naming both versions and who should be upgraded.
Status CheckServed(ProtocolVersion peer, ProtocolVersion ours = kProtocolVersion);

// CheckServed for a request's `Sluice-Protocol` header (empty: kUnversionedProtocol); a
// malformed header is ParseProtocolVersion's error.
Status CheckProtocolHeader(std::string_view header);

// The body of a refusal by CheckProtocolHeader: {"error": message, "cause":
// "PROTOCOL_VERSION", "protocol": the controller's version}.
nlohmann::json ProtocolRefusalBody(const Status& refusal);
// Whether a reply's body is such a refusal.
bool IsProtocolRefusal(const nlohmann::json& body);

}  // namespace sluice::wire
