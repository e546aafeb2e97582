// fifo (R-ADM-2): only the head is evaluated; while it does not fit, nothing behind it
// starts.
#include <utility>

#include "core/admission/policy.h"

namespace sluice::core {
namespace {

class FifoPolicy final : public AdmissionPolicy {
 public:
  void Admit(const Queue& queue, CycleContext& ctx) const override {
    PendingReasons head_reasons;
    auto head = StartInOrder(queue, ctx, head_reasons);
    if (head == queue.pending.end()) return;
    ctx.MarkBlockedHead(*head->job);
    if (!ctx.explain) return;
    ctx.Pend(*head->job, std::move(head_reasons));
    PendBehindHead(queue, std::next(head), *head->job, ctx);
  }
};

}  // namespace

std::unique_ptr<AdmissionPolicy> MakeFifoPolicy() { return std::make_unique<FifoPolicy>(); }

}  // namespace sluice::core
