#include "config/cron_schedule.h"

#include <array>
#include <charconv>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace sluice::config {
namespace {

struct FieldRule {
  const char* name;
  unsigned min;
  unsigned max;
  // Three-letter names for min, min+1, ... (months, weekdays); empty: numbers only.
  std::span<const std::string_view> names;
};

constexpr std::array<std::string_view, 12> kMonthNames = {
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 7> kWeekdayNames = {"sun", "mon", "tue", "wed",
                                                           "thu", "fri", "sat"};

// Day of week allows 7 (Sunday again), folded into 0 when the bits are set.
constexpr std::array<FieldRule, 5> kFields = {{
    {"minute", 0, 59, {}},
    {"hour", 0, 23, {}},
    {"day-of-month", 1, 31, {}},
    {"month", 1, 12, kMonthNames},
    {"day-of-week", 0, 7, kWeekdayNames},
}};

constexpr std::array<unsigned, 12> kLongestMonth = {31, 29, 31, 30, 31, 30,
                                                    31, 31, 30, 31, 30, 31};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view text, char by) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(by, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// Splits on runs of blanks.
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

class FieldParser {
 public:
  FieldParser(size_t index, const FieldRule& rule) : index_(index), rule_(rule) {}

  // Sets the bits (value - rule.min) of every value the field names.
  Status Parse(std::string_view field, std::vector<bool>& bits) const {
    if (field.empty()) return Error("is empty");
    for (std::string_view item : Split(field, ',')) {
      const Status status = ParseItem(item, bits);
      if (!status.ok()) return status;
    }
    return Status::Ok();
  }

 private:
  Status ParseItem(std::string_view item, std::vector<bool>& bits) const {
    if (item.empty()) return Error("has an empty list item");
    unsigned step = 1;
    const size_t slash = item.find('/');
    std::string_view range = item.substr(0, slash);
    if (slash != std::string_view::npos) {
      const std::string_view step_text = item.substr(slash + 1);
      unsigned parsed = 0;
      const auto [end, ec] =
          std::from_chars(step_text.data(), step_text.data() + step_text.size(), parsed);
      if (ec != std::errc() || end != step_text.data() + step_text.size() || parsed == 0) {
        return Error(fmt::format("step '{}' is not a whole number above 0", step_text));
      }
      step = parsed;
    }
    unsigned first = rule_.min;
    unsigned last = rule_.max;
    if (range != "*") {
      const size_t dash = range.find('-');
      Result<unsigned> low = Value(range.substr(0, dash));
      if (!low) return low.error();
      first = *low;
      if (dash != std::string_view::npos) {
        Result<unsigned> high = Value(range.substr(dash + 1));
        if (!high) return high.error();
        last = *high;
        if (last < first) return Error(fmt::format("range {} runs backwards", range));
      } else if (slash == std::string_view::npos) {
        last = first;  // a single value; `a/n` runs from a to the field's end
      }
    }
    for (unsigned v = first;; v += step) {  // no overflow with a huge step
      bits[v - rule_.min] = true;
      if (last - v < step) break;
    }
    return Status::Ok();
  }

  Result<unsigned> Value(std::string_view text) const {
    if (!rule_.names.empty() && !text.empty() && !(text[0] >= '0' && text[0] <= '9')) {
      const std::string name = Lower(text);
      for (size_t i = 0; i < rule_.names.size(); ++i) {
        if (rule_.names[i] == name) return rule_.min + static_cast<unsigned>(i);
      }
      return Error(fmt::format("'{}' is not a {} name", text, rule_.name));
    }
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return Error(fmt::format("'{}' is not a number", text));
    }
    if (value < rule_.min || value > rule_.max) {
      return Error(fmt::format("{} is out of {}-{}", value, rule_.min, rule_.max));
    }
    return value;
  }

  Status Error(std::string_view what) const {
    return InvalidArgument(fmt::format("cron field {} ({}): {}", index_ + 1, rule_.name, what));
  }

  size_t index_;
  const FieldRule& rule_;
};

// The five fields a macro stands for, or nullopt.
std::optional<std::string_view> ExpandMacro(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kMacros = {{
      {"@yearly", "0 0 1 1 *"},
      {"@annually", "0 0 1 1 *"},
      {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"},
      {"@daily", "0 0 * * *"},
      {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"},
  }};
  for (const auto& [macro, fields] : kMacros) {
    if (text == macro) return fields;
  }
  return std::nullopt;
}

}  // namespace

Result<CronSchedule> CronSchedule::Parse(std::string_view text) {
  std::vector<std::string_view> fields = Words(text);
  if (fields.size() == 1 && fields[0][0] == '@') {
    const std::optional<std::string_view> expanded = ExpandMacro(fields[0]);
    if (!expanded) {
      return InvalidArgument(fmt::format(
          "cron: '{}' is not one of @yearly @annually @monthly @weekly @daily @midnight @hourly",
          fields[0]));
    }
    fields = Words(*expanded);
  }
  if (fields.size() != kFields.size()) {
    return InvalidArgument(fmt::format(
        "cron: expected 5 fields (minute hour day-of-month month day-of-week), got {}",
        fields.size()));
  }
  std::array<std::vector<bool>, 5> bits;
  for (size_t i = 0; i < kFields.size(); ++i) {
    bits[i].assign(kFields[i].max - kFields[i].min + 1, false);
    const Status status = FieldParser(i, kFields[i]).Parse(fields[i], bits[i]);
    if (!status.ok()) return status;
  }
  CronSchedule schedule;
  for (size_t v = 0; v < 60; ++v) schedule.minutes_[v] = bits[0][v];
  for (size_t v = 0; v < 24; ++v) schedule.hours_[v] = bits[1][v];
  for (size_t v = 0; v < 31; ++v) schedule.days_[v] = bits[2][v];
  for (size_t v = 0; v < 12; ++v) schedule.months_[v] = bits[3][v];
  for (size_t v = 0; v < 8; ++v) {
    if (bits[4][v]) schedule.weekdays_[v % 7] = true;
  }
  schedule.days_restricted_ = fields[2][0] != '*';
  schedule.weekdays_restricted_ = fields[4][0] != '*';
  // Only a day-of-month rule alone can name no real day (`0 0 31 2 *`); with a weekday rule
  // the weekdays occur every month.
  if (schedule.days_restricted_ && !schedule.weekdays_restricted_) {
    bool occurs = false;
    for (unsigned m = 0; m < 12 && !occurs; ++m) {
      for (unsigned d = 0; d < kLongestMonth[m] && !occurs; ++d) {
        occurs = schedule.months_[m] && schedule.days_[d];
      }
    }
    if (!occurs) {
      return InvalidArgument(
          "cron: never matches (no day of month given occurs in the months given)");
    }
  }
  return schedule;
}

bool CronSchedule::MatchesDay(unsigned day_of_month, unsigned weekday) const {
  const bool day = days_[day_of_month - 1];
  const bool week = weekdays_[weekday];
  if (days_restricted_ && weekdays_restricted_) return day || week;
  return day && week;
}

}  // namespace sluice::config
