// libFuzzer target for the agent protocol (wire/agent_protocol.h; issue 19): any body an
// agent (or anyone holding the agent token) sends, and any reply a controller sends, goes
// through the server's body checks (ParseJsonBody: size, UTF-8, depth, numbers) and then
// every decoder; none may crash, throw, hang or recurse without bound. A decoded message must
// survive the round trip Encode -> Decode -> Encode with the same JSON text; a broken round
// trip aborts, so the fuzzer reports the input. The first byte picks the message kind.
//
// Seeds: tests/fuzz/seeds/agent_protocol (a kind byte, then a JSON body).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/request_guard.h"
#include "wire/agent_protocol.h"

namespace {

using nlohmann::json;

void Require(bool ok, const char* what, const json& first, const json& second) {
  if (ok) return;
  std::fprintf(stderr, "agent_protocol_fuzz: %s\n  first:  %s\n  second: %s\n", what,
               sluice::server::SafeDump(first).c_str(), sluice::server::SafeDump(second).c_str());
  std::abort();
}

// Decode, then Encode -> Decode -> Encode: both encodings must be the same JSON.
template <typename Message, typename Decode, typename Encode>
void RoundTrip(const json& body, Decode decode, Encode encode, const char* what) {
  sluice::Result<Message> decoded = decode(body);
  if (!decoded) {
    Require(!decoded.error().message().empty(), "an error without a message", body, json());
    return;
  }
  const json first = encode(*decoded);
  sluice::Result<Message> again = decode(first);
  Require(again.has_value(), what, first, json());
  const json second = encode(*again);
  Require(first == second, what, first, second);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice::wire;
  if (size < 1) return 0;
  const uint8_t kind = data[0] % 4;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  sluice::Result<json> body = sluice::server::ParseJsonBody(text, 1 << 20);
  if (!body) return 0;
  switch (kind) {
    case 0:
      RoundTrip<RegisterRequest>(
          *body, [](const json& j) { return DecodeRegister(j); },
          [](const RegisterRequest& m) { return EncodeRegister(m); }, "register round trip");
      break;
    case 1:
      RoundTrip<HeartbeatRequest>(
          *body, [](const json& j) { return DecodeHeartbeat(j); },
          [](const HeartbeatRequest& m) { return EncodeHeartbeat(m); }, "heartbeat round trip");
      break;
    case 2:
      RoundTrip<RegisterReply>(
          *body, [](const json& j) { return DecodeRegisterReply(j); },
          [](const RegisterReply& m) { return EncodeRegisterReply(m); },
          "register reply round trip");
      break;
    default:
      RoundTrip<HeartbeatReply>(
          *body, [](const json& j) { return DecodeHeartbeatReply(j); },
          [](const HeartbeatReply& m) { return EncodeHeartbeatReply(m); },
          "heartbeat reply round trip");
      break;
  }
  // Every error path serialises safely too.
  (void)sluice::server::SafeDump(*body);
  return 0;
}
