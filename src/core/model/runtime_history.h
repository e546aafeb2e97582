// RuntimeHistory: the runtimes of each user's most recently finished jobs, the history the
// predictive_backfill policy predicts from (issue 20, core/admission/runtime_prediction.h).
//
// Representation: per user, a ring of the last kKept runtimes (seconds, newest last), and
// one such ring per run limit the user's finished jobs had (knob history_match: user_limit).
// Updated by ClusterState::Finish (a job's runtime is end - start); never reset. Lookups
// only: the maps are never iterated, so their order cannot reach any output.
//
// Study only: a table of true runtimes by job id (SetTrueRuntime), filled by
// `sluice sim --oracle-runtimes` to measure what perfect predictions would give
// (docs/studies/admission.md). Nothing else fills it; the server's is always empty.
// Thread-safety: none (a value inside ClusterState).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "base/time.h"

namespace sluice::core {

class RuntimeHistory {
 public:
  // The most runs a prediction may average (QueueSpec::predictive.history_runs <= kKept).
  static constexpr int32_t kKept = 8;

  // Records a finished job of `user` that ran `runtime` seconds (negative counts as 0) with
  // run limit `run_limit` (none: recorded for the user only).
  void Record(const std::string& user, Duration runtime,
              std::optional<Duration> run_limit = std::nullopt);

  // The mean of the user's last min(runs, recorded) runtimes, rounded up to whole seconds;
  // nullopt when the user has no finished job or `runs` < 1.
  std::optional<Duration> MeanOfLast(const std::string& user, int32_t runs) const;
  // The same over the user's finished jobs whose run limit was `run_limit` only.
  std::optional<Duration> MeanOfLastWithLimit(const std::string& user, Duration run_limit,
                                              int32_t runs) const;

  // How many runtimes are kept for `user` (at most kKept).
  int32_t Count(const std::string& user) const;

  // Study only (see above): the true runtime of job `id`, which predictions then return.
  void SetTrueRuntime(JobId id, Duration runtime) { true_runtimes_[id] = runtime; }
  std::optional<Duration> TrueRuntime(JobId id) const {
    if (true_runtimes_.empty()) return std::nullopt;
    auto it = true_runtimes_.find(id);
    if (it == true_runtimes_.end()) return std::nullopt;
    return it->second;
  }

 private:
  struct Ring {
    std::array<Duration, kKept> runtimes{};
    int32_t next = 0;   // where the next runtime goes
    int32_t count = 0;  // <= kKept
    void Add(Duration runtime);
    std::optional<Duration> MeanOfLast(int32_t runs) const;
  };
  struct UserHistory {
    Ring all;
    // Sorted by run limit. Flat: every finish looks one up and a map's node walk missed the
    // cache at each step (~1.5 % of a trace replay); a user has a few dozen limits at most
    // in the archive traces (HPC2N: 3,983 pairs for 257 users), and a new one is rare.
    std::vector<std::pair<Duration, Ring>> by_limit;
  };
  std::unordered_map<std::string, UserHistory> by_user_;
  std::unordered_map<JobId, Duration> true_runtimes_;
};

}  // namespace sluice::core
