#include "wire/protocol_version.h"

#include <charconv>

namespace sluice::wire {
namespace {

constexpr int kMaxPart = 9999;
constexpr char kRefusalCause[] = "PROTOCOL_VERSION";

bool ParsePart(std::string_view text, int& out) {
  if (text.empty() || text.size() > 4) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= 0 && out <= kMaxPart;
}

}  // namespace

std::string ToString(ProtocolVersion version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor);
}

Result<ProtocolVersion> ParseProtocolVersion(std::string_view text) {
  const size_t dot = text.find('.');
  ProtocolVersion version;
  if (dot == std::string_view::npos || !ParsePart(text.substr(0, dot), version.major) ||
      !ParsePart(text.substr(dot + 1), version.minor)) {
    std::string shown(text.substr(0, 32));
    for (char& c : shown) {
      if (c < 0x20 || c > 0x7e) c = '?';  // a header is the network's: print it safely
    }
    return InvalidArgument(std::string(kProtocolHeader) + ": expected MAJOR.MINOR, got '" + shown +
                           "'");
  }
  return version;
}

Status CheckServed(ProtocolVersion peer, ProtocolVersion ours) {
  const std::string speaks = "this controller speaks protocol " + ToString(ours);
  if (peer.major > ours.major) {
    return FailedPrecondition(speaks + " and cannot serve protocol " + ToString(peer) +
                              " (a newer major version): upgrade the controller first");
  }
  const int oldest_minor = ours.minor > 0 ? ours.minor - 1 : 0;
  if (peer.major < ours.major || peer.minor < oldest_minor) {
    return FailedPrecondition(speaks + " and serves " + std::to_string(ours.major) + "." +
                              std::to_string(oldest_minor) + " and newer, not protocol " +
                              ToString(peer) + ": upgrade this client or agent");
  }
  return Status::Ok();
}

Status CheckProtocolHeader(std::string_view header) {
  if (header.empty()) return CheckServed(kUnversionedProtocol);
  Result<ProtocolVersion> peer = ParseProtocolVersion(header);
  if (!peer) return peer.error();
  return CheckServed(*peer);
}

nlohmann::json ProtocolRefusalBody(const Status& refusal) {
  return {{"error", refusal.message()},
          {"cause", kRefusalCause},
          {"protocol", ToString(kProtocolVersion)}};
}

bool IsProtocolRefusal(const nlohmann::json& body) {
  if (!body.is_object()) return false;
  const auto cause = body.find("cause");  // never `value()`: it throws on another type
  return cause != body.end() && cause->is_string() && *cause == kRefusalCause;
}

}  // namespace sluice::wire
