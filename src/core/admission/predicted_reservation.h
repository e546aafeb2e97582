// The head's reservation computed from predicted runtimes (predictive_backfill's second
// guard, issue 20): the same walk as EASY's (reservation.h), with each running job released
// at its corrected predicted end (RuntimePredictor::PredictedEnd) and each job started
// earlier in this cycle at now + its predicted runtime, instead of at their run limits.
//
// Why a second guard: the run-limit reservation S bounds the head's start, but jobs end
// long before their run limits, so the head usually starts well before S. A backfilled job
// that ends by S on its run limit may still hold slots when the head could have started.
// The predicted reservation S_p is where the head is expected to start; a candidate that
// is predicted to run past S_p must fit in the predicted surplus extra_p.
// Pure: a function of the cycle's state and the predictor.
#pragma once

#include <cstdint>

#include "core/admission/admission_context.h"
#include "core/admission/reservation.h"
#include "core/admission/runtime_prediction.h"

namespace sluice::core {

// The reservation (S_p, extra_p) of a job needing `needed` slots at ctx.now(), from the
// jobs running now (including this cycle's starts) and their predicted ends.
Reservation ReserveFromPredictions(int64_t needed, const RuntimePredictor& predictor,
                                   const AdmissionContext& ctx);

}  // namespace sluice::core
