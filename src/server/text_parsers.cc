#include "server/query_params.h"

#include <charconv>

namespace sluice::server {

Result<int64_t> QueryInteger(const std::string& key, const std::string& value, int64_t min,
                             int64_t max) {
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || ptr != value.data() + value.size() || out < min || out > max) {
    return InvalidArgument(key + ": expected an integer in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "], got '" + value.substr(0, 40) + "'");
  }
  return out;
}

}  // namespace sluice::server
