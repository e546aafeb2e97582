#include "core/model/job_array.h"

#include <algorithm>
#include <charconv>

#include "base/array_ids.h"

namespace sluice::core {
namespace {

class ArraySpecParser {
 public:
  explicit ArraySpecParser(std::string_view text) : text_(text) {}

  // Steps: 1. items separated by commas (ParseItem); 2. an optional `%N` cap; 3. sort and
  // drop duplicates ("1-5,3" is 1..5).
  Result<ArraySpec> Run() {
    ArraySpec spec;
    if (text_.empty()) return Error("expected an index");
    do {
      SLUICE_RETURN_IF_ERROR(ParseItem(spec.indices));
    } while (Accept(','));
    if (Accept('%')) {
      Result<int64_t> cap = ParseNumber("a cap (a positive integer)");
      if (!cap) return cap.error();
      if (*cap < 1) return Error("expected a cap of at least 1");
      spec.cap = static_cast<int32_t>(std::min<int64_t>(*cap, kMaxArrayIndex));
    }
    if (pos_ != text_.size()) return Error("expected ',' or '%' or the end");
    std::sort(spec.indices.begin(), spec.indices.end());
    spec.indices.erase(std::unique(spec.indices.begin(), spec.indices.end()), spec.indices.end());
    return spec;
  }

 private:
  Status ParseItem(std::vector<int32_t>& out) {
    Result<int64_t> first = ParseNumber("an index");
    if (!first) return first.error();
    int64_t last = *first;
    int64_t step = 1;
    if (Accept('-')) {
      Result<int64_t> to = ParseNumber("the last index of a range");
      if (!to) return to.error();
      if (*to < *first) return Error("expected a range's last index >= its first");
      last = *to;
      if (Accept(':')) {
        Result<int64_t> s = ParseNumber("a step");
        if (!s) return s.error();
        if (*s < 1) return Error("expected a step of at least 1");
        step = *s;
      }
    }
    const int64_t count = (last - *first) / step + 1;
    if (static_cast<int64_t>(out.size()) + count > kMaxArrayElements) {
      return Error("expected at most " + std::to_string(kMaxArrayElements) + " elements");
    }
    for (int64_t i = *first; i <= last; i += step) out.push_back(static_cast<int32_t>(i));
    return Status::Ok();
  }

  Result<int64_t> ParseNumber(const std::string& what) {
    const char* first = text_.data() + pos_;
    const char* end = text_.data() + text_.size();
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(first, end, value);
    if (ec != std::errc() || ptr == first || *first == '-' || *first == '+') {
      return Error("expected " + what);
    }
    if (value > kMaxArrayIndex) {
      return Error("expected a number <= " + std::to_string(kMaxArrayIndex));
    }
    pos_ += static_cast<size_t>(ptr - first);
    return value;
  }

  bool Accept(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Status Error(const std::string& expected) const {
    return InvalidArgument("array: column " + std::to_string(pos_ + 1) + ": " + expected);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Result<ArraySpec> ParseArraySpec(std::string_view text) { return ArraySpecParser(text).Run(); }

std::string_view ToString(ElementState state) {
  switch (state) {
    case ElementState::kWaiting:
      return "waiting";
    case ElementState::kHeld:
      return "held";
    case ElementState::kQueued:
      return "queued";
    case ElementState::kDone:
      return "done";
    case ElementState::kExit:
      return "exit";
    case ElementState::kCancelled:
      return "cancelled";
  }
  return "?";
}

int64_t JobArray::PositionOf(int32_t index) const {
  auto it = std::lower_bound(indices.begin(), indices.end(), index);
  if (it == indices.end() || *it != index) return -1;
  return it - indices.begin();
}

}  // namespace sluice::core
