#include "core/model/request_catalog.h"

#include <algorithm>
#include <utility>

#include "core/resreq/parser.h"
#include "core/resreq/validate.h"

namespace sluice::core {

resreq::ResourceCatalog ResourceCatalogOf(const ClusterConfig& config) {
  resreq::ResourceCatalog catalog;
  for (const HostSpec& host : config.hosts) {
    for (const auto& [name, amount] : host.resources) catalog.host_resources.insert(name);
  }
  for (const auto& [name, amount] : config.shared_resources) {
    catalog.shared_resources.insert(name);
  }
  return catalog;
}

RequestCatalog RequestCatalog::Clone(Relink& relink) const {
  RequestCatalog copy;
  copy.expr_pool_ = std::make_unique<resreq::ExprPool>(*expr_pool_);  // same ids
  for (const auto& [text, request] : requests_) {  // order is irrelevant: a map is built
    auto fresh = std::make_unique<resreq::Request>(*request);
    relink.emplace(request.get(), fresh.get());
    copy.requests_.emplace(text, std::move(fresh));
  }
  copy.host_resources_ = host_resources_;
  copy.shared_resources_ = shared_resources_;
  copy.host_count_ = host_count_;
  return copy;
}

Result<const resreq::Request*> RequestCatalog::Compile(const std::string& text) {
  auto it = requests_.find(text);
  if (it != requests_.end()) return it->second.get();
  Result<resreq::Request> parsed = resreq::Parse(text, *expr_pool_);
  if (!parsed) return parsed.error();
  resreq::ResourceCatalog catalog;
  catalog.host_resources.insert(host_resources_.begin(), host_resources_.end());
  catalog.shared_resources.insert(shared_resources_.begin(), shared_resources_.end());
  SLUICE_RETURN_IF_ERROR(resreq::Validate(*parsed, *expr_pool_, catalog));
  auto request = std::make_unique<resreq::Request>(std::move(parsed).value());
  const resreq::Request* result = request.get();
  requests_.emplace(text, std::move(request));
  return result;
}

void RequestCatalog::ResetHosts(const std::vector<std::string>& host_resources, size_t host_count) {
  select_memo_.clear();  // attributes, tags or resource names may have changed
  feasibility_memo_.clear();
  host_resources_ = host_resources;
  host_count_ = host_count;
}

void RequestCatalog::ResetSharedResources(const std::vector<std::string>& shared_resources) {
  feasibility_memo_.clear();
  shared_resources_ = shared_resources;
}

bool RequestCatalog::IsHostResource(std::string_view name) const {
  return std::find(host_resources_.begin(), host_resources_.end(), name) != host_resources_.end();
}

RequestCatalog::SelectMemo& RequestCatalog::MemoOf(resreq::ExprId select) const {
  auto [it, inserted] = select_memo_.try_emplace(select);
  SelectMemo& memo = it->second;
  if (inserted) {
    memo.reads_free_amounts = resreq::ReadsFreeAmounts(
        select, *expr_pool_, [&](std::string_view name) { return IsHostResource(name); });
    memo.verdicts.assign(host_count_, kSelectUnknown);
    memo.tests_free_amounts = TestsFreeAmounts(select);
  }
  return memo;
}

const uint8_t* RequestCatalog::SelectVerdicts(resreq::ExprId select) const {
  if (select == resreq::kNoExpr) return nullptr;
  return MemoOf(select).verdicts.data();
}

bool RequestCatalog::SelectIsStatic(resreq::ExprId select) const {
  return select == resreq::kNoExpr || !MemoOf(select).reads_free_amounts;
}

bool RequestCatalog::SelectTestsFreeAmounts(resreq::ExprId select) const {
  return select != resreq::kNoExpr && MemoOf(select).tests_free_amounts;
}

bool RequestCatalog::TestsFreeAmounts(resreq::ExprId id) const {
  const resreq::ExprPool& pool = *expr_pool_;
  auto consumable = [&](std::string_view name) { return name == "slots" || IsHostResource(name); };
  const resreq::ExprOp op = pool.op(id);
  if (op == resreq::ExprOp::kIdent || op == resreq::ExprOp::kTag) return consumable(pool.text(id));
  if (op == resreq::ExprOp::kDefined) return false;
  const auto operands = pool.operands(id);
  if (resreq::IsComparison(op)) {
    const resreq::ExprId a = operands[0].id;
    const resreq::ExprId b = operands[1].id;
    auto word = [&](resreq::ExprId x, resreq::ExprId other) {  // `gpu` in `type==gpu`
      return pool.op(x) == resreq::ExprOp::kIdent && pool.op(other) == resreq::ExprOp::kIdent &&
             !consumable(pool.text(other));
    };
    return (!word(a, b) && TestsFreeAmounts(a)) || (!word(b, a) && TestsFreeAmounts(b));
  }
  for (const resreq::Operand& operand : operands) {
    if (TestsFreeAmounts(operand.id)) return true;
  }
  return false;
}

bool RequestCatalog::PassesSelectSlow(resreq::ExprId select, HostIndex host,
                                      const resreq::HostView& view) const {
  SelectMemo& memo = MemoOf(select);  // one lookup on this hot path
  uint8_t& verdict = memo.verdicts[host];
  if (verdict == kSelectPasses || verdict == kSelectFails) return verdict == kSelectPasses;
  if (verdict == kSelectReadsFree) return resreq::EvalSelect(select, *expr_pool_, view);
  bool read_free = false;
  const bool passes = resreq::EvalSelect(select, *expr_pool_, view, read_free);
  verdict = read_free ? kSelectReadsFree : passes ? kSelectPasses : kSelectFails;
  return passes;
}

}  // namespace sluice::core
