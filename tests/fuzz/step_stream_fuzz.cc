// libFuzzer target for the step stream's parser (wire/step_stream.h, R-LAUNCH-1): whatever a
// client or an agent sends as frames, and whatever a controller answers as a page, order or
// kill, decodes without crashing, throwing or allocating without bound; a decoded message
// survives Encode -> Decode -> Encode with the same JSON. The first byte picks the message.
// Seeds: tests/fuzz/seeds/step_stream (a kind byte, then a JSON body).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "wire/step_stream.h"

namespace {

using nlohmann::json;
using namespace sluice::wire;

void Require(bool ok, const char* what, const json& body) {
  if (ok) return;
  std::fprintf(stderr, "step_stream_fuzz: %s: %s\n", what,
               body.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  std::abort();
}

template <typename T, typename Decode, typename Encode>
void RoundTrip(const json& body, Decode decode, Encode encode, const char* what) {
  sluice::Result<T> decoded = decode(body);
  if (!decoded) {
    Require(!decoded.error().message().empty(), "an error without a message", body);
    return;
  }
  const json first = encode(*decoded);
  sluice::Result<T> again = decode(first);
  Require(again.has_value(), what, first);
  Require(encode(*again) == first, what, first);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (1 << 20)) return 0;
  const json body = json::parse(data + 1, data + size, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return 0;
  switch (data[0] % 4) {
    case 0:
      RoundTrip<std::vector<StepFrame>>(
          body, [](const json& b) { return DecodeFrames(b); },
          [](const std::vector<StepFrame>& f) { return json{{"frames", EncodeFrames(f)}}; },
          "frames");
      break;
    case 1:
      RoundTrip<StepPage>(body, DecodePage, EncodePage, "page");
      break;
    case 2:
      RoundTrip<StepOrder>(body, DecodeStepOrder, EncodeStepOrder, "order");
      break;
    default:
      RoundTrip<StepKill>(body, DecodeStepKill, EncodeStepKill, "kill");
      break;
  }
  return 0;
}
