#include "sim/plot.h"

#include <gtest/gtest.h>

#include <string>

#include "core/model/cluster_state.h"
#include "testing/builders.h"

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

// On a cluster with GPUs a third chart: devices in use, and the stranded ones dashed.
TEST(PlotTest, AClusterWithGpusGetsAGpuChartWithItsStrandedDevices) {
  PlotSeries series;
  for (Instant t = 0; t < 100; ++t) {
    series.Add(PlotSample{.t = t, .used_slots = 1, .used_gpus = t % 8, .stranded_gpus = t % 3});
  }
  const std::string svg = series.Svg("gpus", 10, /*total_gpus=*/8);
  EXPECT_EQ(Count(svg, "<polyline"), 4u);
  EXPECT_EQ(Count(svg, "stroke-dasharray"), 1u);
  EXPECT_NE(svg.find("GPUs (% in use"), std::string::npos);
  EXPECT_EQ(Count(series.Svg("no gpus", 10), "<polyline"), 2u);
}

// Two hosts of four GPUs, one device held on the first: 1 in use, its 3 others stranded;
// the wholly free host strands nothing.
TEST(PlotTest, SampledGpusCountHeldAndStrandedDevices) {
  core::HostSpec g1{.name = "g1", .slots = 8, .resources = {{"gpu", 4}}};
  core::HostSpec g2{.name = "g2", .slots = 8, .resources = {{"gpu", 4}}};
  core::Topology topology = testing::ClusterBuilder().Host(g1).Host(g2).State().topology();
  topology.Occupy(
      0, core::Allocation{.hosts = {core::HostGrant{.host = 0, .slots = 1, .gpus = 0b0100}}});
  PlotSample sample;
  SampleGpus(topology, sample);
  EXPECT_EQ(sample.used_gpus, 1);
  EXPECT_EQ(sample.stranded_gpus, 3);
  PlotSample none;
  SampleGpus(testing::ClusterBuilder().Hosts(2, 4).State().topology(), none);
  EXPECT_EQ(none.used_gpus + none.stranded_gpus, 0);
}

TEST(PlotTest, AnEmptySeriesIsAnEmptyImage) {
  const std::string svg = PlotSeries().Svg("empty", 4);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 0u);
}

}  // namespace
}  // namespace sluice::sim
