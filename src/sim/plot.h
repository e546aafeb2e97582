// Plots of a simulation over time (R-SIM-2): utilization and queue length, written as one
// SVG image (two stacked charts) — a vector image any browser shows, with no plotting
// library needed.
//
// Series is sampled after every cycle; Svg() draws at most kMaxPoints points per line,
// keeping each bucket's maximum so short peaks stay visible. Deterministic output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/time.h"

namespace sluice::sim {

struct PlotSample {
  Instant t = 0;
  int64_t used_slots = 0;
  int64_t pending_jobs = 0;
};

class PlotSeries {
 public:
  static constexpr size_t kMaxPoints = 1000;

  void Add(PlotSample sample);
  // An SVG document; `total_slots` scales utilization to 0..100 %.
  std::string Svg(const std::string& title, int64_t total_slots) const;

 private:
  std::vector<PlotSample> samples_;
};

}  // namespace sluice::sim
