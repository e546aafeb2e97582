#include "sim/decision_log.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "base/array_ids.h"

namespace sluice::sim {
namespace {

// `"gpus":{"host":[indexes]}` for the hosts where the job holds GPUs, and `"gpu_mem_mb":M`
// when it shares them (R-GPU-3); nothing for a job without GPUs.
template <typename Out>
void AppendGpus(const core::Allocation& allocation, const core::ClusterState& state, Out out) {
  bool first = true;
  int64_t shared_mem_mb = 0;
  for (const core::HostGrant& grant : allocation.hosts) {
    if (grant.gpus == 0) continue;
    fmt::format_to(out, "{}{}:[", first ? R"(,"gpus":{)" : ",",
                   nlohmann::json(state.topology().hosts()[grant.host].spec.name).dump());
    bool first_index = true;
    for (uint64_t rest = grant.gpus; rest != 0; rest &= rest - 1) {
      fmt::format_to(out, "{}{}", first_index ? "" : ",", __builtin_ctzll(rest));
      first_index = false;
    }
    fmt::format_to(out, "]");
    first = false;
    shared_mem_mb = std::max(shared_mem_mb, grant.gpu_mem_mb);
  }
  if (!first) fmt::format_to(out, "}}");
  if (shared_mem_mb > 0) fmt::format_to(out, R"(,"gpu_mem_mb":{})", shared_mem_mb);
}



// A job's `"job"` value: its id, and for an array element the array's id then `"index"`
// (R-UX-3: in JSON an element's id is the array's).
struct JobRef {
  JobId id;
};

}  // namespace
}  // namespace sluice::sim

template <>
struct fmt::formatter<sluice::sim::JobRef> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <typename Context>
  auto format(const sluice::sim::JobRef& job, Context& ctx) const {
    if (!sluice::IsArrayElement(job.id)) return fmt::format_to(ctx.out(), "{}", job.id);
    return fmt::format_to(ctx.out(), "{},\"index\":{}", sluice::ArrayIdOf(job.id),
                          sluice::ArrayIndexOf(job.id));
  }
};

namespace sluice::sim {

void DecisionLog::OnStart(Instant t, const core::Job& job, const core::ClusterState& state) {
  auto out = std::back_inserter(buffer_);
  fmt::format_to(out, R"({{"t":{},"job":{},"event":"start","hosts":{{)", t, JobRef{job.spec.id});
  bool first = true;
  for (const core::HostGrant& grant : job.allocation.hosts) {
    // Host names come from the config and may need escaping.
    fmt::format_to(out, "{}{}:{}", first ? "" : ",",
                   nlohmann::json(state.topology().hosts()[grant.host].spec.name).dump(),
                   grant.slots);
    first = false;
  }
  fmt::format_to(out, "}}");
  AppendGpus(job.allocation, state, out);
  fmt::format_to(out, "}}\n");
  MaybeFlush();
}

void DecisionLog::OnFinish(Instant t, const core::Job& job) {
  if (job.state == core::JobState::kExit) {
    fmt::format_to(std::back_inserter(buffer_),
                   R"({{"t":{},"job":{},"event":"exit","cause":"{}"}})"
                   "\n",
                   t, JobRef{job.spec.id}, core::ToString(job.exit_cause));
  } else {
    fmt::format_to(std::back_inserter(buffer_),
                   R"({{"t":{},"job":{},"event":"finish"}})"
                   "\n",
                   t, JobRef{job.spec.id});
  }
  MaybeFlush();
}

void DecisionLog::OnExit(Instant t, JobId job, core::ExitCause cause, const std::string& message) {
  fmt::format_to(std::back_inserter(buffer_),
                 R"({{"t":{},"job":{},"event":"exit","cause":"{}","message":{}}})"
                 "\n",
                 t, JobRef{job}, core::ToString(cause), nlohmann::json(message).dump());
  MaybeFlush();
}

void DecisionLog::OnCancel(Instant t, JobId job) {
  fmt::format_to(std::back_inserter(buffer_),
                 R"({{"t":{},"job":{},"event":"cancel"}})"
                 "\n",
                 t, JobRef{job});
  MaybeFlush();
}

void DecisionLog::OnPreempt(Instant t, JobId job, JobId for_job) {
  fmt::format_to(std::back_inserter(buffer_),
                 R"({{"t":{},"job":{},"event":"preempt","for":{}}})"
                 "\n",
                 t, JobRef{job}, for_job);
  MaybeFlush();
}

void DecisionLog::MaybeFlush() {
  if (buffer_.size() >= (1 << 16)) Flush();
}

void DecisionLog::Flush() {
  if (buffer_.size() > 0) std::fwrite(buffer_.data(), 1, buffer_.size(), out_);
  buffer_.clear();
  std::fflush(out_);
}

}  // namespace sluice::sim
