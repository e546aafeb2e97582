#include "sim/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "sim/gpu_usage.h"

namespace sluice::sim {
namespace {

constexpr double kWidth = 900;
constexpr double kChartHeight = 220;
constexpr double kLeft = 70;
constexpr double kTop = 40;
constexpr double kGap = 70;

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

using Points = std::vector<std::pair<Instant, double>>;

// One polyline of (t, value) scaled into the chart box at `top`.
void Line(std::string& svg, double top, double max_value, const Points& points, Instant t0,
          Instant t1, const char* style) {
  const double width = kWidth - kLeft - 20;
  const double span = std::max<double>(1, static_cast<double>(t1 - t0));
  const double scale = max_value > 0 ? kChartHeight / max_value : 0;
  fmt::format_to(std::back_inserter(svg), "<polyline fill=\"none\" {} points=\"", style);
  for (const auto& [t, value] : points) {
    fmt::format_to(std::back_inserter(svg), "{:.1f},{:.1f} ",
                   kLeft + width * static_cast<double>(t - t0) / span,
                   top + kChartHeight - value * scale);
  }
  svg += "\"/>\n";
}

// One chart: a polyline of (t, value) scaled into its box, axes and labels.
void Chart(std::string& svg, double top, const std::string& label, double max_value,
           const Points& points, Instant t0, Instant t1) {
  const double width = kWidth - kLeft - 20;
  fmt::format_to(
      std::back_inserter(svg),
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n", kLeft,
      top, width, kChartHeight);
  fmt::format_to(std::back_inserter(svg), "<text x=\"{}\" y=\"{}\" font-size=\"13\">{}</text>\n",
                 kLeft, top - 8, Escape(label));
  fmt::format_to(std::back_inserter(svg),
                 "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{:.0f}</text>\n",
                 kLeft - 6, top + 10, max_value);
  fmt::format_to(std::back_inserter(svg),
                 "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">0</text>\n",
                 kLeft - 6, top + kChartHeight);
  Line(svg, top, max_value, points, t0, t1, "stroke=\"#1f77b4\" stroke-width=\"1\"");
}

}  // namespace

void SampleGpus(const core::Topology& topology, PlotSample& sample) {
  for (const core::Host& host : topology.hosts()) {
    sample.used_gpus += std::popcount(host.GpusHeld());
    sample.stranded_gpus += StrandedGpus(host.devices.all, host.GpusHeld());
  }
}

void PlotSeries::Add(PlotSample sample) { samples_.push_back(sample); }

std::string PlotSeries::Svg(const std::string& title, int64_t total_slots,
                            int64_t total_gpus) const {
  const int charts = total_gpus > 0 ? 3 : 2;
  const double height = kTop + charts * kChartHeight + (charts - 1) * kGap + 40;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\">\n<text x=\"{}\" y=\"20\" font-size=\"15\">{}</text>\n",
      kWidth, height, kLeft, Escape(title));
  if (samples_.empty()) return svg + "</svg>\n";
  const Instant t0 = samples_.front().t;
  const Instant t1 = samples_.back().t;
  // Bucket the samples by time; each bucket keeps its maximum.
  const size_t buckets = std::min(kMaxPoints, samples_.size());
  Points utilization;
  Points pending;
  Points gpus_used;
  Points gpus_stranded;
  double max_pending = 0;
  size_t i = 0;
  for (size_t b = 0; b < buckets && i < samples_.size(); ++b) {
    const Instant end = t0 + static_cast<Instant>(static_cast<double>(t1 - t0) * (b + 1) / buckets);
    double used = 0;
    double queued = 0;
    double gpus = 0;
    double stranded = 0;
    const Instant t = samples_[i].t;
    for (; i < samples_.size() && (samples_[i].t <= end || b + 1 == buckets); ++i) {
      used = std::max(used, static_cast<double>(samples_[i].used_slots));
      queued = std::max(queued, static_cast<double>(samples_[i].pending_jobs));
      gpus = std::max(gpus, static_cast<double>(samples_[i].used_gpus));
      stranded = std::max(stranded, static_cast<double>(samples_[i].stranded_gpus));
    }
    if (total_gpus > 0) {
      gpus_used.emplace_back(t, 100.0 * gpus / static_cast<double>(total_gpus));
      gpus_stranded.emplace_back(t, 100.0 * stranded / static_cast<double>(total_gpus));
    }
    utilization.emplace_back(t,
                             total_slots > 0 ? 100.0 * used / static_cast<double>(total_slots) : 0);
    pending.emplace_back(t, queued);
    max_pending = std::max(max_pending, queued);
  }
  Chart(svg, kTop + 10, "utilization (% of slots)", 100, utilization, t0, t1);
  Chart(svg, kTop + 10 + kChartHeight + kGap, "pending jobs", std::max(1.0, max_pending), pending,
        t0, t1);
  if (total_gpus > 0) {
    const double top = kTop + 10 + 2 * (kChartHeight + kGap);
    Chart(svg, top, "GPUs (% in use; dashed: % stranded on partly used hosts)", 100, gpus_used, t0,
          t1);
    Line(svg, top, 100, gpus_stranded, t0, t1,
         "stroke=\"#d62728\" stroke-width=\"1\" stroke-dasharray=\"4 3\"");
  }
  fmt::format_to(std::back_inserter(svg),
                 "<text x=\"{}\" y=\"{}\" font-size=\"11\">t = {} … {} s</text>\n</svg>\n", kLeft,
                 height - 10, t0, t1);
  return svg;
}

}  // namespace sluice::sim
