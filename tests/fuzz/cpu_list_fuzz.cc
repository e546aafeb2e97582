// libFuzzer target for kernel CPU lists (agent/cpu_topology.h, `sluice agent --bind-cpus`):
// parsing any input must not crash or hang, and a parsed list must survive the round trip
// Parse -> Format -> Parse with the same CPUs. A broken round trip aborts, so the fuzzer
// reports the input.
//
// Seeds: tests/fuzz/seeds/cpu_list (one list per file).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "agent/cpu_topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 512) return 0;  // a list of wide ranges is slow to expand, and no bug needs one
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sluice::Result<std::set<int32_t>> cpus = sluice::agent::ParseCpuList(text);
  if (!cpus) return 0;
  sluice::Result<std::set<int32_t>> again =
      sluice::agent::ParseCpuList(sluice::agent::FormatCpuList(*cpus));
  if (!again || *again != *cpus) {
    std::fprintf(stderr, "cpu_list_fuzz: the formatted list does not parse back the same\n");
    std::abort();
  }
  return 0;
}
