// Query-string parameters of the REST API: one parser for integers so that every route
// refuses a bad value with the same message (400 naming the parameter and its range).
#ifndef SLUICE_SERVER_QUERY_PARAMS_H_
#define SLUICE_SERVER_QUERY_PARAMS_H_

#include <cstdint>
#include <string>

#include "base/status.h"

namespace sluice::server {

// `value` as a decimal integer in [min, max]; otherwise kInvalidArgument
// "KEY: expected an integer in [MIN, MAX], got 'VALUE'" (the value cut at 40 bytes).
Result<int64_t> QueryInteger(const std::string& key, const std::string& value, int64_t min,
                             int64_t max);

}  // namespace sluice::server

#endif  // SLUICE_SERVER_QUERY_PARAMS_H_
