// Interning a job's short names (base/interned_text.h, issue 45): a restart, a submission and a
// trace replay intern a job's user, project, queue and account, so a known text must be cheap
// to find. `build-dev/sluice_bench --benchmark_filter=BM_Intern`; figures in
// docs/performance.md. Not a timed test: nothing asserts.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "base/interned_text.h"

namespace sluice {
namespace {

// A text the pool and this thread already know (the usual case: a site's few users).
void BM_InternKnownText(benchmark::State& state) {
  std::vector<std::string> users;
  for (int i = 0; i < 64; ++i) users.push_back("bench-user-" + std::to_string(i));
  for (const std::string& user : users) benchmark::DoNotOptimize(InternedText(user));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(InternedText(users[i++ & 63]));
  }
}
BENCHMARK(BM_InternKnownText)->ThreadRange(1, 2);

}  // namespace
}  // namespace sluice
