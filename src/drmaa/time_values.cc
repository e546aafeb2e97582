#include "drmaa/time_values.h"

#include <charconv>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "client/text_fields.h"
#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

constexpr int64_t kMaxAmountField = 1'000'000'000;

std::optional<int64_t> Digits(std::string_view text, size_t min_size, size_t max_size) {
  if (text.size() < min_size || text.size() > max_size) return std::nullopt;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}


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

// The broken-down fields of a start time; -1 where the text left a date field out.
struct StartFields {
  int64_t year = -1;  // full year
  int64_t month = -1;
  int64_t day = -1;
  int64_t hour = 0;
  int64_t minute = 0;
  int64_t second = 0;
  std::optional<int64_t> utc_offset;  // seconds east of UTC, when a zone was given
};

// [[[CC]YY/]MM/]DD
bool ReadDate(std::string_view word, StartFields& f) {
  std::vector<std::string_view> parts = client::SplitFields(word, '/');
  if (parts.size() > 4) return false;
  std::optional<int64_t> day = Digits(parts.back(), 1, 2);
  if (!day) return false;
  f.day = *day;
  if (parts.size() >= 2) {
    std::optional<int64_t> month = Digits(parts[parts.size() - 2], 1, 2);
    if (!month) return false;
    f.month = *month;
  }
  if (parts.size() == 3) {  // YY/MM/DD or CCYY/MM/DD
    std::optional<int64_t> year = Digits(parts[0], 2, 4);
    if (!year || parts[0].size() == 3) return false;
    f.year = parts[0].size() == 2 ? 2000 + *year : *year;
  }
  if (parts.size() == 4) {  // CC/YY/MM/DD, the century apart
    std::optional<int64_t> century = Digits(parts[0], 2, 2);
    std::optional<int64_t> year = Digits(parts[1], 2, 2);
    if (!century || !year) return false;
    f.year = *century * 100 + *year;
  }
  return true;
}

// hh:mm[:ss]
bool ReadClock(std::string_view word, StartFields& f) {
  std::vector<std::string_view> parts = client::SplitFields(word, ':');
  if (parts.size() < 2 || parts.size() > 3) return false;
  std::optional<int64_t> hour = Digits(parts[0], 1, 2);
  std::optional<int64_t> minute = Digits(parts[1], 2, 2);
  std::optional<int64_t> second = parts.size() == 3 ? Digits(parts[2], 2, 2) : 0;
  if (!hour || !minute || !second) return false;
  f.hour = *hour;
  f.minute = *minute;
  f.second = *second;
  return true;
}

// {-|+}UU:uu
bool ReadZone(std::string_view word, StartFields& f) {
  if (word.size() != 6 || (word[0] != '+' && word[0] != '-') || word[3] != ':') return false;
  std::optional<int64_t> hours = Digits(word.substr(1, 2), 2, 2);
  std::optional<int64_t> minutes = Digits(word.substr(4, 2), 2, 2);
  if (!hours || !minutes || *hours > 23 || *minutes > 59) return false;
  f.utc_offset = (word[0] == '-' ? -1 : 1) * (*hours * 3600 + *minutes * 60);
  return true;
}

bool ReadStartFields(std::string_view text, StartFields& f) {
  std::vector<std::string_view> words = Words(text);
  size_t i = 0;
  if (i < words.size() && words[i].find(':') == std::string_view::npos) {
    if (!ReadDate(words[i++], f)) return false;
  }
  if (i == words.size() || !ReadClock(words[i++], f)) return false;
  if (i < words.size() && !ReadZone(words[i++], f)) return false;
  return i == words.size();
}

}  // namespace

Expected<int64_t> ParseStartTime(std::string_view text, int64_t now) {
  StartFields f;
  if (!ReadStartFields(text, f)) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                 std::string(DRMAA_START_TIME) + ": expected [[[[CC]YY/]MM/]DD] hh:mm[:ss] "
                 "[{-|+}UU:uu], got \"" + std::string(text) + "\"");
  }
  // Today, in the zone the time is written in: the given offset, else local time.
  const std::time_t now_t =
      static_cast<std::time_t>(f.utc_offset ? now + *f.utc_offset : now);
  std::tm today{};
  if (f.utc_offset) {
    gmtime_r(&now_t, &today);
  } else {
    localtime_r(&now_t, &today);
  }
  std::tm tm{};
  tm.tm_year = static_cast<int>(f.year >= 0 ? f.year - 1900 : today.tm_year);
  tm.tm_mon = static_cast<int>(f.month >= 0 ? f.month - 1 : today.tm_mon);
  tm.tm_mday = static_cast<int>(f.day >= 0 ? f.day : today.tm_mday);
  tm.tm_hour = static_cast<int>(f.hour);
  tm.tm_min = static_cast<int>(f.minute);
  tm.tm_sec = static_cast<int>(f.second);
  tm.tm_isdst = -1;
  const bool in_range = tm.tm_mon >= 0 && tm.tm_mon < 12 && tm.tm_mday >= 1 &&
                        tm.tm_mday <= 31 && f.hour < 24 && f.minute < 60 && f.second < 61;
  const std::tm asked = tm;
  const std::time_t at = f.utc_offset ? timegm(&tm) : std::mktime(&tm);
  // mktime/timegm normalise 31/02 into March: a field that moved names no real date.
  if (!in_range || at == -1 || tm.tm_mday != asked.tm_mday || tm.tm_mon != asked.tm_mon) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                 std::string(DRMAA_START_TIME) + ": \"" + std::string(text) +
                     "\" is not a date and time that exists");
  }
  return static_cast<int64_t>(at) - f.utc_offset.value_or(0);
}

Expected<int64_t> ParseTimeAmount(std::string_view text, std::string_view attribute) {
  std::vector<std::string_view> parts = client::SplitFields(text, ':');
  int64_t seconds = 0;
  bool ok = parts.size() <= 3;
  for (size_t i = 0; ok && i < parts.size(); ++i) {
    std::optional<int64_t> value = Digits(parts[i], 1, 10);
    ok = value.has_value() && *value <= kMaxAmountField;
    if (ok) seconds = seconds * 60 + *value;
  }
  if (!ok) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                 std::string(attribute) + ": expected [[h:]m:]s, got \"" + std::string(text) +
                     "\"");
  }
  if (seconds == 0) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                 std::string(attribute) + ": the limit must be at least one second");
  }
  return seconds;
}

}  // namespace sluice::drmaa
