// DecisionLog: the `--decisions FILE` writer (R-SIM-4), one JSON object per line:
//   {"t":130,"job":7,"event":"start","hosts":{"h003":2,"h004":2}}
//   {"t":430,"job":7,"event":"finish"}
//   {"t":130,"job":9,"event":"exit","cause":"UNSCHEDULABLE","message":"..."}
//   {"t":200,"job":8,"event":"cancel"}
// Keys always in this order; hosts in host-index order. docs/design/decisions-format.md.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "sim/simulator.h"

namespace sluice::sim {

class DecisionLog final : public DecisionSink {
 public:
  // Writes to `out` (not owned); buffered, flushed by Flush() and the destructor.
  explicit DecisionLog(std::FILE* out) : out_(out) {}
  ~DecisionLog() override { Flush(); }

  void OnStart(Instant t, const core::Job& job, const core::ClusterState& state) override;
  void OnFinish(Instant t, const core::Job& job) override;
  void OnExit(Instant t, JobId job, core::ExitCause cause, const std::string& message) override;
  void OnCancel(Instant t, JobId job) override;
  void OnPreempt(Instant t, JobId job, JobId for_job) override;
  void Flush();

 private:
  void MaybeFlush();

  std::FILE* out_;
  fmt::memory_buffer buffer_;
};

}  // namespace sluice::sim
