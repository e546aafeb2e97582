// Plots of a simulation over time (R-SIM-2): utilization and queue length, written as one
// SVG image (two stacked charts) — a vector image any browser shows, with no plotting
// library needed. On a cluster with GPUs a third chart shows the devices in use and the
// stranded ones (free on a partly used host: a whole-host job cannot have them; R-GPU-4).
//
// Series is sampled after every cycle; Svg() draws at most kMaxPoints points per line,
// keeping each bucket's maximum so short peaks stay visible. Deterministic output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/time.h"
#include "core/model/topology.h"

namespace sluice::sim {

struct PlotSample {
  Instant t = 0;
  int64_t used_slots = 0;
  int64_t pending_jobs = 0;
  int64_t used_gpus = 0;      // devices held by jobs
  int64_t stranded_gpus = 0;  // free devices on hosts with some held
};

// The GPU fields of a sample of `topology` now (0 on a cluster without GPUs).
void SampleGpus(const core::Topology& topology, PlotSample& sample);

class PlotSeries {
 public:
  static constexpr size_t kMaxPoints = 1000;

  void Add(PlotSample sample);
  // An SVG document; `total_slots` scales utilization to 0..100 %, `total_gpus` the GPU
  // chart, drawn only when it is positive.
  std::string Svg(const std::string& title, int64_t total_slots, int64_t total_gpus = 0) const;

 private:
  std::vector<PlotSample> samples_;
};

}  // namespace sluice::sim
