// The simulator's name for the core's start-time forecast (core/driver/forecast.h, which
// describes the method): `sluice sim --pending-at` and the controller run the same code.
#pragma once

#include "core/driver/forecast.h"
#include "wire/estimate_json.h"

namespace sluice::sim {

using StartEstimate = core::StartEstimate;
using EstimateOptions = core::EstimateOptions;
using core::EstimateStarts;
using wire::AddEstimateJson;
using wire::EstimateText;

}  // namespace sluice::sim
