// ClusterState's select memo is exact per host (issue 8): a verdict that read no free amount
// is memoized even when the select names a resource (`type==gpu` against a text `type`),
// and a verdict that did read one is re-evaluated every time, so it follows the capacity.
#include <gtest/gtest.h>

#include "core/alloc/capacity.h"
#include "core/alloc/host_view.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;

HostSpec GpuHost(std::string name, std::string type) {
  return HostSpec{.name = std::move(name),
                  .slots = 4,
                  .resources = {{"gpu", 2}},
                  .attributes = {{"type", std::move(type)}}};
}

TEST(SelectMemoTest, AWordComparedWithTextIsMemoizedAFreeAmountIsNot) {
  // h1's type is text: `type==gpu` compares words. h2's type is a number: `type==gpu`
  // compares it with the free gpus.
  ClusterState state = ClusterBuilder().Host(GpuHost("h1", "gpu")).Host(GpuHost("h2", "2")).State();
  Result<const resreq::Request*> request = state.CompileRequest("select[type==gpu]");
  ASSERT_TRUE(request.has_value());
  const resreq::ExprId select = (*request)->alternatives[0].parts[0].select;

  Capacity idle(state);
  CapacityHostView view(state, idle);
  view.Bind(0);
  EXPECT_TRUE(state.requests().PassesSelect(select, 0, view));
  view.Bind(1);
  EXPECT_TRUE(state.requests().PassesSelect(select, 1, view));  // 2 free gpus == 2
  const uint8_t* verdicts = state.requests().SelectVerdicts(select);
  ASSERT_NE(verdicts, nullptr);
  EXPECT_EQ(verdicts[0], RequestCatalog::kSelectPasses);
  EXPECT_EQ(verdicts[1], RequestCatalog::kSelectReadsFree);

  // One gpu claimed on each host: h1 still passes (memoized), h2 no longer does.
  Capacity busy(state);
  busy.ClaimHost(HostGrant{
      .host = 0, .slots = 1, .resources = {{*state.topology().FindHostResource("gpu"), 1}}});
  busy.ClaimHost(HostGrant{
      .host = 1, .slots = 1, .resources = {{*state.topology().FindHostResource("gpu"), 1}}});
  CapacityHostView busy_view(state, busy);
  busy_view.Bind(0);
  EXPECT_TRUE(state.requests().PassesSelect(select, 0, busy_view));
  busy_view.Bind(1);
  EXPECT_FALSE(state.requests().PassesSelect(select, 1, busy_view));
  EXPECT_EQ(state.requests().SelectVerdicts(select)[1], RequestCatalog::kSelectReadsFree);
}

TEST(SelectMemoTest, ASelectOnAFreeAmountIsNeverMemoized) {
  ClusterState state = ClusterBuilder().Host(GpuHost("h1", "gpu")).State();
  Result<const resreq::Request*> request = state.CompileRequest("select[gpu>1]");
  ASSERT_TRUE(request.has_value());
  const resreq::ExprId select = (*request)->alternatives[0].parts[0].select;
  Capacity idle(state);
  CapacityHostView view(state, idle);
  view.Bind(0);
  EXPECT_TRUE(state.requests().PassesSelect(select, 0, view));
  EXPECT_EQ(state.requests().SelectVerdicts(select)[0], RequestCatalog::kSelectReadsFree);
  Capacity busy(state);
  busy.ClaimHost(HostGrant{
      .host = 0, .slots = 1, .resources = {{*state.topology().FindHostResource("gpu"), 1}}});
  CapacityHostView busy_view(state, busy);
  busy_view.Bind(0);
  EXPECT_FALSE(state.requests().PassesSelect(select, 0, busy_view));
}

}  // namespace
}  // namespace sluice::core
