// LeaseFile: the agent's lease file, `<state dir>/lease` (issue 43): one decimal number and a
// newline, the CLOCK_MONOTONIC instant in milliseconds (steady_clock's epoch) until which the
// controller cannot requeue this host's jobs. A job shepherd whose agent died keeps its job
// until then (job_shepherd.h explains why that is exactly once); the agent moves it on after
// each successful request, and a restarted agent inherits it for the jobs it adopts.
// Representation: the path and the deadline last written. Written whole (temp file + rename):
// a shepherd never reads half a number. Not fsync'd: a crash of the machine ends the jobs too.
// Thread-safety: not thread-safe; the agent calls it under its mutex.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "base/status.h"

namespace sluice::agent {

using LeaseClock = std::chrono::steady_clock;

inline std::string LeaseFilePath(const std::string& state_dir) { return state_dir + "/lease"; }

// Writes `deadline` into the lease file `path`. Errors: kInternal naming the file.
Status WriteLeaseDeadline(const std::string& path, LeaseClock::time_point deadline);
// The deadline in the lease file; nullopt when it is missing or unreadable.
std::optional<LeaseClock::time_point> ReadLeaseDeadline(const std::string& path);

class LeaseFile {
 public:
  explicit LeaseFile(std::string path) : path_(std::move(path)) {}

  // Takes the deadline the file holds (a previous run's) as the one written. Returns it.
  std::optional<LeaseClock::time_point> Inherit();
  // Writes `deadline` when it moved back, or on by `step` or more (behind the true deadline a
  // shepherd only kills sooner, so a write per heartbeat is not needed). No-op without a path.
  // Errors: WriteLeaseDeadline's (the written deadline stays as it was).
  Status Renew(LeaseClock::time_point deadline,
               std::chrono::milliseconds step = std::chrono::milliseconds(500));
  // The deadline last written or inherited.
  const std::optional<LeaseClock::time_point>& written() const { return written_; }

 private:
  std::string path_;
  std::optional<LeaseClock::time_point> written_;
};

}  // namespace sluice::agent
