#include "core/model/window.h"

#include <algorithm>

namespace sluice::core {
namespace {

constexpr int64_t kDay = 86400;
// 1970-01-01 (wall 0) was a Thursday: day 3 of a week that starts on Monday.
constexpr int64_t kEpochSecondOfWeek = 3 * kDay;

// "HH:MM" as seconds since midnight.
std::optional<int64_t> ParseClock(std::string_view text) {
  if (text.size() != 5 || text[2] != ':') return std::nullopt;
  for (size_t i : {0, 1, 3, 4}) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  }
  const int hours = (text[0] - '0') * 10 + (text[1] - '0');
  const int minutes = (text[3] - '0') * 10 + (text[4] - '0');
  if (hours > 23 || minutes > 59) return std::nullopt;
  return hours * 3600 + minutes * 60;
}

std::optional<int64_t> ParseDay(std::string_view text) {
  static constexpr std::string_view kDays[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  for (int64_t d = 0; d < 7; ++d) {
    if (text == kDays[d]) return d;
  }
  return std::nullopt;
}

// One endpoint: "HH:MM" (daily) or "Ddd HH:MM" (weekly), as seconds of the day or week.
std::optional<int64_t> ParseEndpoint(std::string_view text, bool weekly) {
  if (!weekly) return ParseClock(text);
  if (text.size() != 9 || text[3] != ' ') return std::nullopt;
  const std::optional<int64_t> day = ParseDay(text.substr(0, 3));
  const std::optional<int64_t> clock = ParseClock(text.substr(4));
  if (!day || !clock) return std::nullopt;
  return *day * kDay + *clock;
}

struct Window {
  int64_t start = 0;
  int64_t end = 0;
  bool weekly = false;
};

Result<Window> ParseWindow(std::string_view text) {
  const std::string quoted =
      "'" + std::string(text.substr(0, 40)) + (text.size() > 40 ? "..." : "") + "'";
  const bool weekly = !text.empty() && text[0] >= 'A' && text[0] <= 'Z';
  const size_t dash = text.find('-');
  std::optional<int64_t> start;
  std::optional<int64_t> end;
  if (dash != std::string_view::npos) {
    start = ParseEndpoint(text.substr(0, dash), weekly);
    end = ParseEndpoint(text.substr(dash + 1), weekly);
  }
  if (!start || !end) {
    return InvalidArgument(quoted + " is not a window \"hh:mm-hh:mm\" (00:00 to 23:59) or " +
                           "\"Ddd hh:mm-Ddd hh:mm\" (Ddd: Mon to Sun)");
  }
  if (*start == *end) return InvalidArgument(quoted + " is empty (start equals end)");
  return Window{.start = *start, .end = *end, .weekly = weekly};
}

int64_t SecondOfWeek(Instant wall) {
  int64_t s = (wall % kSecondsPerWeek + kEpochSecondOfWeek) % kSecondsPerWeek;
  if (s < 0) s += kSecondsPerWeek;
  return s;
}

}  // namespace

Status DispatchWindows::Check(std::string_view window) {
  Result<Window> parsed = ParseWindow(window);
  return parsed ? Status::Ok() : parsed.error();
}

Result<DispatchWindows> DispatchWindows::Parse(const std::vector<std::string>& windows) {
  // 1. Every window as intervals of the week: a daily window is seven, a wrapping one splits.
  std::vector<std::pair<int64_t, int64_t>> spans;
  auto add = [&](int64_t start, int64_t end) {  // [start, end) may wrap past the week's end
    if (start < end) {
      spans.emplace_back(start, end);
    } else {
      spans.emplace_back(start, kSecondsPerWeek);
      if (end > 0) spans.emplace_back(0, end);
    }
  };
  for (const std::string& text : windows) {
    Result<Window> w = ParseWindow(text);
    if (!w) return w.error();
    if (w->weekly) {
      add(w->start, w->end);
      continue;
    }
    const int64_t length = (w->end - w->start + kDay) % kDay;
    for (int64_t d = 0; d < 7; ++d) {
      const int64_t start = d * kDay + w->start;
      add(start, (start + length) % kSecondsPerWeek);
    }
  }
  // 2. Their union: sorted, overlapping or touching intervals merged.
  std::sort(spans.begin(), spans.end());
  DispatchWindows result;
  for (const auto& span : spans) {
    if (!result.intervals_.empty() && span.first <= result.intervals_.back().second) {
      result.intervals_.back().second = std::max(result.intervals_.back().second, span.second);
    } else {
      result.intervals_.push_back(span);
    }
  }
  result.full_week_ = result.intervals_.size() == 1 && result.intervals_[0].first == 0 &&
                      result.intervals_[0].second == kSecondsPerWeek;
  return result;
}

bool DispatchWindows::IsOpen(Instant wall) const {
  if (always_open()) return true;
  const int64_t s = SecondOfWeek(wall);
  // The last interval starting at or before s.
  auto it =
      std::upper_bound(intervals_.begin(), intervals_.end(), std::make_pair(s, kSecondsPerWeek));
  if (it == intervals_.begin()) return false;
  --it;
  return s < it->second;
}

std::optional<Instant> DispatchWindows::NextChange(Instant wall) const {
  if (always_open()) return std::nullopt;
  const int64_t s = SecondOfWeek(wall);
  // Boundaries in week order; an end at the week's end that meets a start at 0 is no change.
  int64_t best = -1;
  for (const auto& [start, end] : intervals_) {
    for (int64_t b : {start, end}) {
      if (b == kSecondsPerWeek && intervals_.front().first == 0) continue;
      if (b == 0 && intervals_.back().second == kSecondsPerWeek) continue;
      int64_t delta = (b - s) % kSecondsPerWeek;
      if (delta <= 0) delta += kSecondsPerWeek;
      if (best < 0 || delta < best) best = delta;
    }
  }
  if (best < 0) return std::nullopt;
  return AddDuration(wall, best);
}

Instant DispatchWindows::NextOpening(Instant wall) const {
  if (IsOpen(wall)) return wall;
  std::optional<Instant> change = NextChange(wall);
  return change ? *change : kInfinite;
}

}  // namespace sluice::core
