#include "wire/peek.h"

#include <algorithm>

namespace sluice::wire {
namespace {

using nlohmann::json;

Status ReadInteger(const json& entry, const char* key, const std::string& where, bool required,
                   std::optional<int64_t>& out) {
  auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) {
    if (required) return InvalidArgument(where + "." + key + ": missing");
    return Status::Ok();
  }
  if (!it->is_number_integer()) return InvalidArgument(where + "." + key + ": expected an integer");
  out = it->is_number_unsigned()
            ? static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), INT64_MAX))
            : it->get<int64_t>();
  return Status::Ok();
}

Status ReadText(const json& entry, const char* key, const std::string& where, std::string& out) {
  auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return InvalidArgument(where + "." + key + ": expected a string");
  out = it->get<std::string>();
  return Status::Ok();
}

template <typename T>
Result<std::vector<T>> DecodeList(const json& body, const char* key,
                                  Result<T> (*decode)(const json&, const std::string&)) {
  std::vector<T> out;
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return out;
  if (!it->is_array()) return InvalidArgument(std::string(key) + ": expected an array");
  for (size_t i = 0; i < it->size(); ++i) {
    Result<T> entry = decode((*it)[i], std::string(key) + "[" + std::to_string(i) + "]");
    if (!entry) return entry.error();
    out.push_back(std::move(*entry));
  }
  return out;
}

// The length of the valid UTF-8 sequence at `s[i]`, or 0.
size_t SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t min = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  uint32_t code = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::string ValidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = SequenceLength(bytes, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

json EncodePeekOrder(const PeekOrder& order) {
  json j = {{"id", order.id}, {"job", order.job}, {"lines", order.lines}};
  if (order.offset) j["offset"] = *order.offset;
  return j;
}

Result<PeekOrder> DecodePeekOrder(const json& entry, const std::string& where) {
  if (!entry.is_object()) return InvalidArgument(where + ": expected an object");
  std::optional<int64_t> id, job, lines, offset;
  SLUICE_RETURN_IF_ERROR(ReadInteger(entry, "id", where, true, id));
  SLUICE_RETURN_IF_ERROR(ReadInteger(entry, "job", where, true, job));
  SLUICE_RETURN_IF_ERROR(ReadInteger(entry, "lines", where, false, lines));
  SLUICE_RETURN_IF_ERROR(ReadInteger(entry, "offset", where, false, offset));
  if (offset && *offset < 0) return InvalidArgument(where + ".offset: expected >= 0");
  return PeekOrder{.id = *id,
                   .job = *job,
                   .lines = std::clamp<int64_t>(lines.value_or(10), 1, kMaxPeekLines),
                   .offset = offset};
}

json EncodePeekResult(const PeekResult& result) {
  json j = {{"id", result.id}, {"job", result.job}};
  if (!result.error.empty()) {
    j["error"] = result.error;
    return j;
  }
  j["text"] = result.text;
  j["offset"] = result.offset;
  j["size"] = result.size;
  return j;
}

Result<PeekResult> DecodePeekResult(const json& entry, const std::string& where) {
  if (!entry.is_object()) return InvalidArgument(where + ": expected an object");
  std::optional<int64_t> id, job, offset, size;
  SLUICE_RETURN_IF_ERROR(ReadInteger(entry, "id", where, true, id));
  SLUICE_RETURN_IF_ERROR(ReadInteger(entry, "job", where, true, job));
  SLUICE_RETURN_IF_ERROR(ReadInteger(entry, "offset", where, false, offset));
  SLUICE_RETURN_IF_ERROR(ReadInteger(entry, "size", where, false, size));
  PeekResult result{.id = *id, .job = *job, .offset = offset.value_or(0), .size = size.value_or(0)};
  SLUICE_RETURN_IF_ERROR(ReadText(entry, "text", where, result.text));
  SLUICE_RETURN_IF_ERROR(ReadText(entry, "error", where, result.error));
  if (static_cast<int64_t>(result.text.size()) > kMaxPeekBytes * 3) {
    return InvalidArgument(where + ".text: longer than " + std::to_string(kMaxPeekBytes) +
                           " bytes");
  }
  return result;
}

Result<std::vector<PeekOrder>> DecodePeekOrders(const json& body, const char* key) {
  return DecodeList<PeekOrder>(body, key, DecodePeekOrder);
}

Result<std::vector<PeekResult>> DecodePeekResults(const json& body, const char* key) {
  return DecodeList<PeekResult>(body, key, DecodePeekResult);
}

}  // namespace sluice::wire
