// RequestCatalog: requests compiled once against the resources it was told of, and memos that
// are dropped whenever what they depend on changes.
#include "core/model/request_catalog.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>

namespace sluice::core {
namespace {

// A host with fixed attributes and free amounts; counts the free amounts read.
class FakeHost : public resreq::HostView {
 public:
  std::map<std::string, std::string, std::less<>> attributes;
  std::map<std::string, double, std::less<>> free;
  mutable int free_reads = 0;

  std::optional<std::string_view> Attribute(std::string_view name) const override {
    auto it = attributes.find(name);
    if (it == attributes.end()) return std::nullopt;
    return it->second;
  }
  bool HasTag(std::string_view) const override { return false; }
  std::optional<double> Free(std::string_view name) const override {
    auto it = free.find(name);
    if (it == free.end()) return std::nullopt;
    ++free_reads;
    return it->second;
  }
  std::optional<double> Total(std::string_view name) const override { return Free(name); }
};

resreq::ExprId SelectOf(const resreq::Request* request) {
  return request->alternatives[0].parts[0].select;
}

TEST(RequestCatalogTest, CompileInternsAndValidatesAgainstTheResourcesItWasTold) {
  RequestCatalog catalog;
  EXPECT_EQ(catalog.Compile("rusage[mem=1]").error().code(), StatusCode::kInvalidArgument);
  catalog.ResetHosts({"mem"}, 1);
  Result<const resreq::Request*> first = catalog.Compile("rusage[mem=1]");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*catalog.Compile("rusage[mem=1]"), *first);  // the same object
  EXPECT_EQ(catalog.request_count(), 1u);
  EXPECT_EQ(catalog.Compile("rusage[lic=1]").error().code(), StatusCode::kInvalidArgument);
  catalog.ResetSharedResources({"lic"});
  EXPECT_TRUE(catalog.Compile("rusage[lic=1]").has_value());
  EXPECT_EQ(catalog.Compile("select[").error().code(), StatusCode::kInvalidArgument);
}

TEST(RequestCatalogTest, AStaticVerdictIsMemoizedUntilHostsChange) {
  RequestCatalog catalog;
  catalog.ResetHosts({"gpu"}, 2);
  const resreq::ExprId select = SelectOf(*catalog.Compile("select[type==x86]"));
  FakeHost host;
  host.attributes["type"] = "x86";
  EXPECT_TRUE(catalog.SelectIsStatic(select));
  EXPECT_FALSE(catalog.SelectTestsFreeAmounts(select));
  EXPECT_EQ(catalog.SelectVerdicts(select)[0], RequestCatalog::kSelectUnknown);
  EXPECT_TRUE(catalog.PassesSelect(select, 0, host));
  EXPECT_EQ(catalog.SelectVerdicts(select)[0], RequestCatalog::kSelectPasses);
  host.attributes["type"] = "arm";  // the memo answers, not the host
  EXPECT_TRUE(catalog.PassesSelect(select, 0, host));
  catalog.ResetHosts({"gpu"}, 2);
  EXPECT_FALSE(catalog.PassesSelect(select, 0, host));
  EXPECT_EQ(catalog.SelectVerdicts(select)[0], RequestCatalog::kSelectFails);
}

TEST(RequestCatalogTest, AVerdictOnAFreeAmountIsEvaluatedEachTime) {
  RequestCatalog catalog;
  catalog.ResetHosts({"gpu"}, 1);
  const resreq::ExprId select = SelectOf(*catalog.Compile("select[gpu>1]"));
  EXPECT_FALSE(catalog.SelectIsStatic(select));
  EXPECT_TRUE(catalog.SelectTestsFreeAmounts(select));
  FakeHost host;
  host.free["gpu"] = 2;
  EXPECT_TRUE(catalog.PassesSelect(select, 0, host));
  EXPECT_EQ(catalog.SelectVerdicts(select)[0], RequestCatalog::kSelectReadsFree);
  host.free["gpu"] = 1;
  EXPECT_FALSE(catalog.PassesSelect(select, 0, host));
  EXPECT_EQ(catalog.SelectVerdicts(resreq::kNoExpr), nullptr);
  EXPECT_TRUE(catalog.PassesSelect(resreq::kNoExpr, 0, host));
}

TEST(RequestCatalogTest, TheFeasibilityMemoIsDroppedByEveryReset) {
  RequestCatalog catalog;
  auto fill = [&] { catalog.feasibility_memo()[RequestCatalog::FeasibilityKey{}] = {}; };
  fill();
  catalog.ResetQueues();
  EXPECT_TRUE(catalog.feasibility_memo().empty());
  fill();
  catalog.ResetSharedResources({});
  EXPECT_TRUE(catalog.feasibility_memo().empty());
  fill();
  catalog.ResetHosts({}, 0);
  EXPECT_TRUE(catalog.feasibility_memo().empty());
}

TEST(RequestCatalogTest, CloneIsDeepAndRelinksEveryRequest) {
  RequestCatalog catalog;
  catalog.ResetHosts({"mem"}, 1);
  const resreq::Request* request = *catalog.Compile("select[mem>1] rusage[mem=1]");
  RequestCatalog::Relink relink;
  RequestCatalog copy = catalog.Clone(relink);
  ASSERT_EQ(relink.size(), 1u);
  const resreq::Request* moved = relink.at(request);
  EXPECT_NE(moved, request);
  EXPECT_EQ(*copy.Compile("select[mem>1] rusage[mem=1]"), moved);
  EXPECT_NE(&copy.expr_pool(), &catalog.expr_pool());
  EXPECT_EQ(SelectOf(moved), SelectOf(request));  // the same ids in the copied pool
}

TEST(RequestCatalogTest, ResourceCatalogComesFromTheClusterConfig) {
  ClusterConfig config;
  config.hosts.push_back(HostSpec{.name = "a", .resources = {{"mem", 10}}});
  config.hosts.push_back(HostSpec{.name = "b", .resources = {{"gpu", 1}, {"mem", 10}}});
  config.shared_resources = {{"lic", 4}};
  const resreq::ResourceCatalog catalog = ResourceCatalogOf(config);
  EXPECT_EQ(catalog.host_resources, (std::set<std::string>{"gpu", "mem"}));
  EXPECT_EQ(catalog.shared_resources, (std::set<std::string>{"lic"}));
}

}  // namespace
}  // namespace sluice::core
