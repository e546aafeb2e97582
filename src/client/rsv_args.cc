#include "client/rsv_args.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <optional>
#include <set>

#include "client/text_fields.h"

namespace sluice::client {
namespace {

constexpr std::string_view kTimeForms =
    "expected a time: now, now+DURATION, +DURATION, YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM], "
    "[[[YEAR:]MONTH:]DAY:]HOUR:MINUTE or epoch seconds";
constexpr std::string_view kDurationForms =
    "expected a duration: 90m, 2h, 1d, 1h30m, H:M:S, D-H:M:S or MINUTES";

Status Bad(std::string_view option, std::string_view text, std::string_view expected) {
  return InvalidArgument(std::string(option) + " " + std::string(text) + ": " +
                         std::string(expected));
}

bool AllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// A non-negative integer of at most 10 digits (no sign, no overflow in the sums below).
std::optional<int64_t> Number(std::string_view text) {
  if (!AllDigits(text) || text.size() > 10) return std::nullopt;
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

int DaysInMonth(int64_t year, int64_t month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

struct CivilTime {
  int64_t year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0;
  bool Valid() const {
    return year >= 1970 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 &&
           day <= DaysInMonth(year, month) && hour <= 23 && minute <= 59 && second <= 59;
  }
};

std::tm ToTm(const CivilTime& c) {
  std::tm tm{};
  tm.tm_year = static_cast<int>(c.year - 1900);
  tm.tm_mon = static_cast<int>(c.month - 1);
  tm.tm_mday = static_cast<int>(c.day);
  tm.tm_hour = static_cast<int>(c.hour);
  tm.tm_min = static_cast<int>(c.minute);
  tm.tm_sec = static_cast<int>(c.second);
  tm.tm_isdst = -1;
  return tm;
}

int64_t LocalSeconds(const CivilTime& c) {
  std::tm tm = ToTm(c);
  return static_cast<int64_t>(std::mktime(&tm));
}

CivilTime LocalCivil(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  return {tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
}

// "Z", "+01:00", "-0530", "+02": the offset east of UTC in seconds.
std::optional<int64_t> ZoneOffset(std::string_view zone) {
  if (zone == "Z" || zone == "z") return 0;
  if (zone.size() < 3 || (zone[0] != '+' && zone[0] != '-')) return std::nullopt;
  std::string digits;
  for (char c : zone.substr(1)) {
    if (c != ':') digits += c;
  }
  if (digits.size() != 2 && digits.size() != 4) return std::nullopt;
  const auto hours = Number(std::string_view(digits).substr(0, 2));
  const auto minutes = digits.size() == 4 ? Number(std::string_view(digits).substr(2)) : 0;
  if (!hours || !minutes || *hours > 14 || *minutes > 59) return std::nullopt;
  const int64_t offset = *hours * 3600 + *minutes * 60;
  return zone[0] == '-' ? -offset : offset;
}

// YYYY-MM-DD[THH:MM[:SS][zone]].
std::optional<int64_t> IsoTime(std::string_view text) {
  const size_t t = text.find_first_of("T ");
  const std::vector<std::string_view> date = SplitFields(text.substr(0, t), '-');
  if (date.size() != 3 || date[0].size() != 4) return std::nullopt;
  CivilTime c;
  const auto year = Number(date[0]), month = Number(date[1]), day = Number(date[2]);
  if (!year || !month || !day) return std::nullopt;
  c.year = *year, c.month = *month, c.day = *day;
  std::optional<int64_t> offset;
  if (t != std::string_view::npos) {
    std::string_view clock = text.substr(t + 1);
    const size_t zone = clock.find_first_of("Zz+-");
    if (zone != std::string_view::npos) {
      offset = ZoneOffset(clock.substr(zone));
      if (!offset) return std::nullopt;
      clock = clock.substr(0, zone);
    }
    const std::vector<std::string_view> parts = SplitFields(clock, ':');
    if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
    int64_t* fields[] = {&c.hour, &c.minute, &c.second};
    for (size_t i = 0; i < parts.size(); ++i) {
      const auto value = parts[i].size() == 2 ? Number(parts[i]) : std::nullopt;
      if (!value) return std::nullopt;
      *fields[i] = *value;
    }
  }
  if (!c.Valid()) return std::nullopt;
  if (!offset) return LocalSeconds(c);
  std::tm tm = ToTm(c);
  return static_cast<int64_t>(timegm(&tm)) - *offset;
}

// LSF's [[[YEAR:]MONTH:]DAY:]HOUR:MINUTE.
std::optional<int64_t> LsfTime(std::string_view text, int64_t now) {
  std::vector<int64_t> fields;
  for (std::string_view part : SplitFields(text, ':')) {
    const auto value = Number(part);
    if (!value) return std::nullopt;
    fields.push_back(*value);
  }
  if (fields.size() < 2 || fields.size() > 5) return std::nullopt;
  CivilTime c = LocalCivil(now);
  c.second = 0;
  const size_t n = fields.size();
  c.hour = fields[n - 2];
  c.minute = fields[n - 1];
  if (n >= 3) c.day = fields[n - 3];
  if (n >= 4) c.month = fields[n - 4];
  if (n == 5) c.year = fields[0];
  if (!c.Valid()) return std::nullopt;
  int64_t at = LocalSeconds(c);
  if (n == 2 && at <= now) {  // HOUR:MINUTE that has passed today: tomorrow's
    CivilTime tomorrow = LocalCivil(now + 86400);
    tomorrow.hour = c.hour, tomorrow.minute = c.minute, tomorrow.second = 0;
    at = LocalSeconds(tomorrow);
  }
  return at;
}

// 90s, 2h, 1h30m: a sum of numbers with units.
std::optional<int64_t> UnitDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t total = 0;
  while (!text.empty()) {
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
      ++digits;
    }
    if (digits == 0 || digits == text.size()) return std::nullopt;
    const auto value = Number(text.substr(0, digits));
    if (!value) return std::nullopt;
    int64_t unit = 0;
    switch (text[digits]) {
      case 's':
        unit = 1;
        break;
      case 'm':
        unit = 60;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'd':
        unit = 86400;
        break;
      case 'w':
        unit = 7 * 86400;
        break;
      default:
        return std::nullopt;
    }
    total += *value * unit;
    text.remove_prefix(digits + 1);
  }
  return total;
}

// H:M, H:M:S, D-H:M:S (and D-H, D-H:M as Slurm writes them).
std::optional<int64_t> ClockDuration(std::string_view text) {
  int64_t days = 0;
  if (const size_t dash = text.find('-'); dash != std::string_view::npos) {
    const auto value = Number(text.substr(0, dash));
    if (!value) return std::nullopt;
    days = *value;
    text.remove_prefix(dash + 1);
  }
  const std::vector<std::string_view> parts = SplitFields(text, ':');
  if (parts.size() > 3) return std::nullopt;
  static constexpr int64_t kScale[3] = {3600, 60, 1};
  int64_t total = days * 86400;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto value = Number(parts[i]);
    if (!value || (i > 0 && *value > 59)) return std::nullopt;
    total += *value * kScale[i];
  }
  if (days == 0 && parts.size() < 2) return std::nullopt;
  return total;
}

// Splits at commas and spaces outside brackets.
std::vector<std::string_view> ListItems(std::string_view text) {
  std::vector<std::string_view> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (((c == ',' || c == ' ') && depth <= 0) || i == text.size()) {
      if (i > start) items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return items;
}

bool HostNameChars(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
  });
}

// One item: a name or PREFIX[ranges]SUFFIX, appended to `names`; an error says what is wrong.
Status ExpandItem(std::string_view item, std::vector<std::string>& names) {
  const size_t open = item.find('[');
  if (open == std::string_view::npos) {
    if (!HostNameChars(item) || item.find(']') != std::string_view::npos) {
      return InvalidArgument("'" + std::string(item) + "' is not a host name");
    }
    names.emplace_back(item);
    return Status::Ok();
  }
  const size_t close = item.find(']', open);
  const std::string_view prefix = item.substr(0, open);
  if (close == std::string_view::npos)
    return InvalidArgument("unclosed '[' in " + std::string(item));
  const std::string_view suffix = item.substr(close + 1);
  if (!HostNameChars(prefix) || !HostNameChars(suffix)) {
    return InvalidArgument("'" + std::string(item) +
                           "': one range per name, of letters, digits, "
                           "'-', '.' and '_'");
  }
  for (std::string_view range : SplitFields(item.substr(open + 1, close - open - 1), ',')) {
    const size_t dash = range.find('-');
    const std::string_view lo_text = range.substr(0, dash);
    const std::string_view hi_text =
        dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    const auto lo = lo_text.size() <= 9 ? Number(lo_text) : std::nullopt;
    const auto hi = hi_text.size() <= 9 ? Number(hi_text) : std::nullopt;
    if (!lo || !hi || *lo > *hi) {
      return InvalidArgument("'" + std::string(item) +
                             "': expected ranges like [1-8] or [01-16,20]");
    }
    if (names.size() + static_cast<size_t>(*hi - *lo + 1) > kMaxRsvHosts) {
      return InvalidArgument("more than " + std::to_string(kMaxRsvHosts) + " hosts");
    }
    const size_t width = lo_text.size() > 1 && lo_text[0] == '0' ? lo_text.size() : 0;
    for (int64_t i = *lo; i <= *hi; ++i) {
      std::string number = std::to_string(i);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      names.push_back(std::string(prefix) + number + std::string(suffix));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<int64_t> ParseRsvTime(std::string_view text, std::string_view option, int64_t now) {
  if (text == "now") return now;
  if (text.starts_with("now+") || text.starts_with("+")) {
    const std::string_view rest = text.substr(text.find('+') + 1);
    Result<int64_t> offset = ParseRsvDuration(rest, option);
    if (!offset) return Bad(option, text, kTimeForms);
    return now + *offset;
  }
  std::optional<int64_t> at;
  if (AllDigits(text)) {
    if (text.size() >= 9) at = Number(text);
  } else if (text.size() >= 10 && text[4] == '-') {
    at = IsoTime(text);
  } else if (text.find(':') != std::string_view::npos) {
    at = LsfTime(text, now);
  }
  if (!at || *at < 0) return Bad(option, text, kTimeForms);
  return *at;
}

Result<int64_t> ParseRsvDuration(std::string_view text, std::string_view option) {
  std::optional<int64_t> seconds;
  if (AllDigits(text)) {
    const auto minutes = Number(text);
    if (minutes) seconds = *minutes * 60;
  } else if (text.find_first_of(":-") != std::string_view::npos) {
    seconds = ClockDuration(text);
  } else {
    seconds = UnitDuration(text);
  }
  if (!seconds) return Bad(option, text, kDurationForms);
  if (*seconds <= 0) return Bad(option, text, "the duration must be positive");
  return *seconds;
}

Result<std::vector<std::string>> ExpandHostList(std::string_view text, std::string_view option) {
  std::vector<std::string> names;
  for (std::string_view item : ListItems(text)) {
    Status expanded = ExpandItem(item, names);
    if (!expanded.ok()) return Bad(option, text, expanded.message());
  }
  if (names.empty()) return Bad(option, text, "expected host names or ranges, e.g. h1,h[2-8]");
  std::set<std::string> seen;
  std::vector<std::string> unique;
  for (std::string& name : names) {
    if (seen.insert(name).second) unique.push_back(std::move(name));
  }
  return unique;
}

Result<std::vector<std::string>> SplitNameList(std::string_view text, std::string_view option) {
  std::vector<std::string> names;
  for (std::string_view item : ListItems(text)) names.emplace_back(item);
  if (names.empty()) return Bad(option, text, "expected names separated by commas");
  return names;
}

std::string DurationText(int64_t seconds) {
  if (seconds <= 0) return "0s";
  std::string out;
  const int64_t parts[] = {seconds / 86400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60};
  static constexpr const char* kUnits[] = {"d", "h", "m", "s"};
  for (size_t i = 0; i < 4; ++i) {
    if (parts[i] > 0) out += std::to_string(parts[i]) + kUnits[i];
  }
  return out;
}

}  // namespace sluice::client
