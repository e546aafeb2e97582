// libFuzzer target for the JSONL workload reader (R-SIM-4).
//
// ParseJsonl must never crash or let an exception escape; a rejected input must be
// kInvalidArgument with a `<file>:<line>: ` prefix; an accepted one must survive a
// WriteJsonl -> ParseJsonl round trip with every field unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sim/jsonl_reader.h"
#include "sim/workload_writer.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

bool SameJob(const sluice::sim::WorkloadJob& a, const sluice::sim::WorkloadJob& b) {
  const sluice::core::JobSpec& x = a.spec;
  const sluice::core::JobSpec& y = b.spec;
  return x.id == y.id && x.name == y.name && x.user == y.user && x.project == y.project &&
         x.queue == y.queue && x.command == y.command && x.resreq == y.resreq &&
         x.min_tasks == y.min_tasks && x.max_tasks == y.max_tasks && x.run_limit == y.run_limit &&
         x.priority == y.priority && x.submit_time == y.submit_time &&
         x.begin_time == y.begin_time && x.depend == y.depend && x.exclusive == y.exclusive &&
         x.hold == y.hold && a.runtime == b.runtime && a.cancel_at == b.cancel_at;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sluice::Result;
  using sluice::sim::ParseJsonl;
  using sluice::sim::Workload;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<Workload> workload = ParseJsonl(text, "fuzz.jsonl", {});
  if (!workload) {
    Require(workload.error().code() == sluice::StatusCode::kInvalidArgument);
    Require(workload.error().message().rfind("fuzz.jsonl:", 0) == 0);
    return 0;
  }
  for (size_t i = 1; i < workload->jobs.size(); ++i) {
    Require(workload->jobs[i - 1].spec.submit_time <= workload->jobs[i].spec.submit_time);
  }
  Result<Workload> again = ParseJsonl(sluice::sim::WriteJsonl(*workload), "again.jsonl", {});
  Require(again.has_value());
  Require(again->jobs.size() == workload->jobs.size());
  for (size_t i = 0; i < workload->jobs.size(); ++i) {
    Require(SameJob(workload->jobs[i], again->jobs[i]));
  }
  return 0;
}
