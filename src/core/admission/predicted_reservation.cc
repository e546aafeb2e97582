#include "core/admission/predicted_reservation.h"

#include <vector>

namespace sluice::core {
namespace {

// Started-this-cycle jobs have no start sequence yet; they follow every running job (as in
// head_protection.cc).
constexpr uint64_t kThisCycleOrderBase = uint64_t{1} << 62;

}  // namespace

Reservation ReserveFromPredictions(int64_t needed, const RuntimePredictor& predictor,
                                   const AdmissionContext& ctx) {
  const Instant now = ctx.now();
  if (ctx.TotalFree() >= needed)
    return Reservation{.shadow = now, .extra = ctx.TotalFree() - needed};
  std::vector<Release> releases;
  releases.reserve(ctx.state().running().size() + ctx.started().size());
  for (const RunningEntry& entry : ctx.state().running()) {
    const Job& job = *entry.job;
    releases.push_back(Release{.expected_end = predictor.PredictedEnd(job, now),
                               .order = entry.start_seq,
                               .slots = job.allocation.TotalSlots()});
  }
  for (size_t i = 0; i < ctx.started().size(); ++i) {
    const StartedJob& started = ctx.started()[i];
    releases.push_back(Release{.expected_end = AddDuration(now, predictor.Predict(*started.job)),
                               .order = kThisCycleOrderBase + i,
                               .slots = started.slots});
  }
  return ComputeReservation(needed, ctx.TotalFree(), now, releases);
}

}  // namespace sluice::core
