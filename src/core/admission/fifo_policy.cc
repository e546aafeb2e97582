// fifo (R-ADM-2): only the head is evaluated; while it does not fit, nothing behind it
// starts.
#include <utility>

#include "core/admission/policy.h"

namespace sluice::core {
namespace {

class FifoPolicy final : public AdmissionPolicy {
 public:
  void Admit(const Queue& /*queue*/, const QueueOrder& order,
             AdmissionContext& ctx) const override {
    PendingReasons head_reasons;
    auto head = StartInOrder(order, ctx, head_reasons);
    if (head == order.end()) return;
    ctx.MarkBlockedHead(*head);
    if (!ctx.explain()) return;
    ctx.Pend(*head, std::move(head_reasons));
    PendBehindHead(order, std::next(head), *head, ctx);
  }
};

}  // namespace

std::unique_ptr<AdmissionPolicy> MakeFifoPolicy() { return std::make_unique<FifoPolicy>(); }

}  // namespace sluice::core
