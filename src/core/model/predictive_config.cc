#include "core/model/predictive_config.h"

namespace sluice::core {

std::string_view ToString(BackfillOrder order) {
  switch (order) {
    case BackfillOrder::kQueue:
      return "queue";
    case BackfillOrder::kShortest:
      return "shortest";
    case BackfillOrder::kExpansion:
      return "expansion";
  }
  return "unknown";
}

std::optional<BackfillOrder> ParseBackfillOrder(std::string_view text) {
  for (BackfillOrder order :
       {BackfillOrder::kQueue, BackfillOrder::kShortest, BackfillOrder::kExpansion}) {
    if (ToString(order) == text) return order;
  }
  return std::nullopt;
}

std::string_view ToString(HistoryMatch match) {
  switch (match) {
    case HistoryMatch::kUser:
      return "user";
    case HistoryMatch::kUserLimit:
      return "user_limit";
  }
  return "unknown";
}

std::optional<HistoryMatch> ParseHistoryMatch(std::string_view text) {
  for (HistoryMatch match : {HistoryMatch::kUser, HistoryMatch::kUserLimit}) {
    if (ToString(match) == text) return match;
  }
  return std::nullopt;
}

}  // namespace sluice::core
