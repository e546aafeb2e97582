// libFuzzer target for job script directives (R-UX-1, client/directives.h): parsing any
// script must not crash or hang; an error always names its line (`fuzz:LINE: ...`), and the
// flags a successful parse gives are accepted by BuildSubmitBody or refused with a message
// (never a crash). A broken rule aborts, so the fuzzer reports the input.
//
// Seeds: tests/fuzz/seeds/directives (one script per file).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "client/directives.h"

namespace {

void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "directives_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice::client;
  const std::string_view script(reinterpret_cast<const char*>(data), size);
  sluice::Result<Directives> parsed = ParseDirectives(script, "fuzz", 1'764'450'000);
  if (!parsed) {
    Require(parsed.error().message().starts_with("fuzz:"), "an error that names no line");
    return 0;
  }
  SubmitFlags flags = parsed->flags;
  flags.command = {"fuzz"};
  flags.script = std::string(script);
  sluice::Result<nlohmann::json> body = BuildSubmitBody(flags, "/tmp", 1'764'450'000);
  if (!body) Require(!body.error().message().empty(), "a refusal without a message");
  return 0;
}
