// Past usage for fairshare (R-Q-4): slot-seconds a user's finished runs took in a queue,
// decayed with the queue's half-life. Kept as (amount, as_of): the amount at time as_of,
// decaying by half every half-life after it, so adding usage or reading it is O(1).
#pragma once

#include <cmath>

#include "base/time.h"

namespace sluice::core {

struct FairshareUsage {
  double slot_seconds = 0;
  Instant as_of = 0;

  double At(Instant now, Duration half_life) const {
    if (now <= as_of || half_life <= 0) return half_life <= 0 ? 0 : slot_seconds;
    return slot_seconds *
           std::exp2(-static_cast<double>(now - as_of) / static_cast<double>(half_life));
  }
  void Add(double amount, Instant now, Duration half_life) {
    slot_seconds = At(now, half_life) + amount;
    as_of = std::max(as_of, now);
  }
};

}  // namespace sluice::core
