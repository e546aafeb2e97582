// FreeAmountSelect: the compiled form of a select on free amounts gives the general
// evaluator's verdict on every host it answers for, over random hosts (with and without the
// resource, with attributes of the same name) and random claims; the forms it does not
// cover are left to the evaluator (nullopt from Compile).
#include "core/alloc/free_amount_select.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/alloc/host_view.h"
#include "core/resreq/eval.h"

namespace sluice::core {
namespace {

ClusterState RandomCluster(std::mt19937_64& rng) {
  ClusterConfig config;
  const int hosts = 20 + static_cast<int>(rng() % 80);
  for (int h = 0; h < hosts; ++h) {
    HostSpec host{.name = "h" + std::to_string(h), .slots = 1 + static_cast<int32_t>(rng() % 8)};
    if (rng() % 4 != 0) host.resources["mem"] = static_cast<int64_t>(rng() % 9) * 1000;
    if (rng() % 3 == 0) host.resources["gpu"] = static_cast<int64_t>(rng() % 5);
    // Names that are attributes where they are not resources: the evaluator's business.
    if (!host.resources.contains("mem") && rng() % 2 == 0) {
      host.attributes["mem"] = rng() % 2 == 0 ? "5000" : "big";
    }
    if (rng() % 3 == 0) host.attributes["type"] = "gpu";
    config.hosts.push_back(host);
  }
  config.queues.push_back(QueueSpec{.name = "normal"});
  Result<ClusterState> created = ClusterState::Create(config);
  EXPECT_TRUE(created.has_value());
  return std::move(created).value();
}

resreq::ExprId SelectOf(ClusterState& state, const std::string& text) {
  Result<const resreq::Request*> request = state.CompileRequest("select[" + text + "]");
  EXPECT_TRUE(request.has_value()) << text;
  return (*request)->alternatives[0].parts[0].select;
}

// Claims random slots and memory, so free amounts vary from host to host.
void ClaimAtRandom(Capacity& capacity, const ClusterState& state, std::mt19937_64& rng) {
  const std::optional<ResourceId> mem = state.topology().FindHostResource("mem");
  for (HostIndex h = 0; h < capacity.host_count(); ++h) {
    if (capacity.FreeSlots(h) == 0 || rng() % 2 == 0) continue;
    HostGrant grant{.host = h,
                    .slots = 1 + static_cast<int32_t>(rng() % capacity.FreeSlots(h))};
    if (mem && capacity.Defines(state, h, *mem) && capacity.FreeResource(h, *mem) > 0) {
      grant.resources.push_back(ResourceAmount{
          *mem, 1 + static_cast<int64_t>(rng() % capacity.FreeResource(h, *mem))});
    }
    capacity.ClaimHost(grant);
  }
}

TEST(FreeAmountSelectTest, AgreesWithTheEvaluatorOnRandomHosts) {
  const std::vector<std::string> selects = {
      "mem>4000",          "4000<mem",           "mem==0",
      "mem!=3000",         "slots>=2",           "slots>=2 && mem>1000",
      "mem<=2000 && gpu>0", "gpu!=1 && slots<3", "3 >= gpu && 2000 <= mem && slots>0"};
  int answered = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    ClusterState state = RandomCluster(rng);
    Capacity capacity(state);
    ClaimAtRandom(capacity, state, rng);
    for (const std::string& text : selects) {
      SCOPED_TRACE(text);
      const resreq::ExprId select = SelectOf(state, text);
      // After the select is interned: interning may move the names a view refers to (ASAN).
      CapacityHostView view(state, capacity);
      const std::optional<FreeAmountSelect> compiled =
          FreeAmountSelect::Compile(select, state.requests().expr_pool(), state);
      if (!state.topology().FindHostResource("gpu") && text.find("gpu") != std::string::npos) {
        EXPECT_FALSE(compiled.has_value());  // `gpu` is no resource here: an attribute or word
        continue;
      }
      ASSERT_TRUE(compiled.has_value());
      for (HostIndex h = 0; h < capacity.host_count(); ++h) {
        view.Bind(h);
        const bool expected = resreq::EvalSelect(select, state.requests().expr_pool(), view);
        if (std::optional<bool> passes = compiled->Passes(state, capacity, h)) {
          EXPECT_EQ(*passes, expected) << "host " << h;
          ++answered;
        }
      }
    }
  }
  EXPECT_GT(answered, 1000);  // the compiled form answers most hosts, not none
}

TEST(FreeAmountSelectTest, LeavesOtherFormsToTheEvaluator) {
  std::mt19937_64 rng(7);
  ClusterState state = RandomCluster(rng);
  for (const std::string text :
       {"type==gpu", "mem>4000 && type!=gpu", "mem>2*1000", "mem>slots", "mem>4000 || slots>1",
        "!(mem>4000)", "mem", "nosuch>1", "maxmem>4000"}) {
    EXPECT_FALSE(FreeAmountSelect::Compile(SelectOf(state, text), state.requests().expr_pool(),
                                           state)
                     .has_value())
        << text;
  }
  EXPECT_FALSE(FreeAmountSelect::Compile(resreq::kNoExpr, state.requests().expr_pool(), state));
}

}  // namespace
}  // namespace sluice::core
