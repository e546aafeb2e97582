// RuntimeHistory: the runtimes of each user's most recently finished jobs, the history the
// predictive_backfill policy predicts from (issue 20, core/admission/runtime_prediction.h).
//
// Representation: per user, a ring of the last kKept runtimes (seconds, newest last).
// Updated by ClusterState::Finish (a job's runtime is end - start); never reset. Lookups
// only: the map is never iterated, so its order cannot reach any output.
// Thread-safety: none (a value inside ClusterState).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/time.h"

namespace sluice::core {

class RuntimeHistory {
 public:
  // The most runs a prediction may average (QueueSpec::predictive.history_runs <= kKept).
  static constexpr int32_t kKept = 8;

  // Records a finished job of `user` that ran `runtime` seconds (negative counts as 0).
  void Record(const std::string& user, Duration runtime);

  // The mean of the user's last min(runs, recorded) runtimes, rounded up to whole seconds;
  // nullopt when the user has no finished job or `runs` < 1.
  std::optional<Duration> MeanOfLast(const std::string& user, int32_t runs) const;

  // How many runtimes are kept for `user` (at most kKept).
  int32_t Count(const std::string& user) const;

 private:
  struct Ring {
    std::array<Duration, kKept> runtimes{};
    int32_t next = 0;   // where the next runtime goes
    int32_t count = 0;  // <= kKept
  };
  std::unordered_map<std::string, Ring> by_user_;
};

}  // namespace sluice::core
