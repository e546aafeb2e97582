#include "sim/plot.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::sim {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PlotTest, DrawsUtilizationAndQueueLengthDeterministically) {
  PlotSeries series;
  for (Instant t = 0; t < 5000; ++t) {
    series.Add(PlotSample{.t = t, .used_slots = t % 10, .pending_jobs = (t * 7) % 13});
  }
  const std::string svg = series.Svg("a <title>", 10);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 2u);
  EXPECT_NE(svg.find("a &lt;title&gt;"), std::string::npos);
  // At most kMaxPoints points per line: one "x,y " pair each.
  const size_t first = svg.find("points=\"");
  const std::string points = svg.substr(first, svg.find('"', first + 8) - first);
  EXPECT_LE(Count(points, ","), PlotSeries::kMaxPoints);
  EXPECT_EQ(svg, series.Svg("a <title>", 10));
}

TEST(PlotTest, AnEmptySeriesIsAnEmptyImage) {
  const std::string svg = PlotSeries().Svg("empty", 4);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 0u);
}

}  // namespace
}  // namespace sluice::sim
