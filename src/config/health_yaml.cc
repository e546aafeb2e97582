#include "config/health_yaml.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "config/cluster_yaml.h"

namespace sluice::config::yaml {
namespace {

constexpr const char* kDurationText = "a duration (seconds, or a number with s, m or h)";

// Seconds per unit suffix; 0: not a unit.
int64_t UnitSeconds(char unit) {
  switch (unit) {
    case 's':
      return 1;
    case 'm':
      return 60;
    case 'h':
      return 3600;
    default:
      return 0;
  }
}

Status ReadProgram(const Reader& reader, const Field& f, std::string& out) {
  Result<std::string> text = reader.ReadString(f);
  if (!text) return text.error();
  if (text->empty() || text->front() != '/' || text->find('\0') != std::string::npos) {
    return reader.Expected(f, "an absolute path");
  }
  out = *text;
  return Status::Ok();
}

}  // namespace

Result<Duration> ReadDuration(const Reader& reader, const Field& f, Duration min, Duration max) {
  if (!f.node.IsScalar()) return reader.Expected(f, kDurationText);
  const std::string& text = f.node.Scalar();
  int64_t scale = 1;
  size_t digits = text.size();
  if (!text.empty() && UnitSeconds(text.back()) != 0) {
    scale = UnitSeconds(text.back());
    --digits;
  }
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (digits == 0 || ec != std::errc() || end != text.data() + digits || value < 0) {
    return reader.Expected(f, kDurationText);
  }
  if (value > max / scale) return reader.Error(f, text + " > " + std::to_string(max) + " s");
  const Duration seconds = value * scale;
  if (seconds < min) return reader.Error(f, text + " < " + std::to_string(min) + " s");
  return seconds;
}

Result<std::optional<core::HealthCheck>> ReadHealthCheck(const Reader& reader, const Field& f) {
  if (f.node.IsScalar() && !IsStringTagged(f.node) && f.node.Scalar() == "none") {
    return std::optional<core::HealthCheck>();
  }
  if (!f.node.IsMap()) return reader.Expected(f, "a map (program, interval, timeout) or none");
  Result<std::vector<Entry>> keys = reader.MapEntries(f);
  if (!keys) return keys.error();
  core::HealthCheck check;
  bool has_program = false;
  const Field* timeout = nullptr;
  for (const Entry& k : *keys) {
    if (k.key == "program") {
      SLUICE_RETURN_IF_ERROR(ReadProgram(reader, k.value, check.program));
      has_program = true;
    } else if (k.key == "interval") {
      SLUICE_RETURN_IF_ERROR(Assign(
          ReadDuration(reader, k.value, kMinHealthInterval, kMaxHealthDuration), check.interval));
    } else if (k.key == "timeout") {
      timeout = &k.value;
    } else {
      return reader.Error(k.key_line, k.value.path, "unknown key (program, interval, timeout)");
    }
  }
  if (!has_program) return reader.Error(f, "missing required key 'program'");
  // After the loop: the timeout's bound is the interval, wherever it is written.
  if (timeout != nullptr) {
    SLUICE_RETURN_IF_ERROR(
        Assign(ReadDuration(reader, *timeout, 1, kMaxHealthDuration), check.timeout));
    if (check.timeout > check.interval) {
      return reader.Error(*timeout, "timeout " + std::to_string(check.timeout) + " s > interval " +
                                        std::to_string(check.interval) + " s");
    }
  } else if (check.timeout > check.interval) {
    check.timeout = check.interval;  // the default shrinks to a short interval
  }
  return std::optional<core::HealthCheck>(std::move(check));
}

}  // namespace sluice::config::yaml

namespace sluice::config {

std::optional<core::HealthCheck> HealthChecks::For(std::string_view host) const {
  auto own = hosts.find(host);
  return own != hosts.end() ? own->second : all;
}

}  // namespace sluice::config
