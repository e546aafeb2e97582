// libFuzzer target for the SWF reader (R-SIM-1c).
//
// ParseSwf must never crash on any input; what it accepts must obey the loading rules
// (1 <= size <= P, runtime >= 0, submit >= 0, sorted by submit, a run limit), and a
// WriteSwf -> ParseSwf round trip must give back the same jobs. The first input byte also
// selects --procs and --max-jobs so that those paths are explored.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sim/swf_reader.h"
#include "sim/workload_writer.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

sluice::sim::SwfOptions OptionsFrom(const uint8_t* data, size_t size) {
  sluice::sim::SwfOptions options;
  if (size == 0) return options;
  options.procs = data[0] % 4 == 0 ? 0 : data[0] % 64;
  options.max_jobs = (data[0] & 0x80) != 0 ? data[0] % 8 : -1;
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sluice::Result;
  using sluice::sim::ParseSwf;
  using sluice::sim::Workload;
  using sluice::sim::WorkloadJob;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const sluice::sim::SwfOptions options = OptionsFrom(data, size);
  Result<Workload> workload = ParseSwf(text, options);
  if (!workload) {
    Require(workload.error().code() == sluice::StatusCode::kInvalidArgument);
    return 0;
  }
  Require(workload->procs >= 1);
  Require(workload->skipped >= 0);
  if (options.max_jobs >= 0)
    Require(workload->jobs.size() <= static_cast<size_t>(options.max_jobs));
  for (size_t i = 0; i < workload->jobs.size(); ++i) {
    const WorkloadJob& job = workload->jobs[i];
    Require(job.spec.min_tasks == job.spec.max_tasks);
    Require(job.spec.min_tasks >= 1 && job.spec.max_tasks <= workload->procs);
    Require(job.runtime >= 0 && job.spec.submit_time >= 0);
    Require(job.spec.run_limit.has_value());
    Require(*job.spec.run_limit > 0 || *job.spec.run_limit == job.runtime);
    if (i > 0) Require(workload->jobs[i - 1].spec.submit_time <= job.spec.submit_time);
  }

  Result<Workload> again = ParseSwf(sluice::sim::WriteSwf(*workload), {});
  Require(again.has_value());
  Require(again->procs == workload->procs && again->skipped == 0);
  Require(again->jobs.size() == workload->jobs.size());
  for (size_t i = 0; i < workload->jobs.size(); ++i) {
    const WorkloadJob& a = workload->jobs[i];
    const WorkloadJob& b = again->jobs[i];
    Require(a.spec.id == b.spec.id && a.spec.submit_time == b.spec.submit_time);
    Require(a.spec.max_tasks == b.spec.max_tasks && a.runtime == b.runtime);
    Require(a.spec.run_limit == b.spec.run_limit && a.spec.user == b.spec.user);
  }
  return 0;
}
