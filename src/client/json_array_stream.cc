#include "client/json_array_stream.h"

#include <utility>

namespace sluice::client {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

Status JsonArraySplitter::Malformed(const std::string& expected) const {
  return Status(StatusCode::kInternal, "the controller's listing is malformed at byte " +
                                           std::to_string(offset_) + ": expected " + expected);
}

Status JsonArraySplitter::EndElement() {
  nlohmann::json element = nlohmann::json::parse(element_, nullptr, /*allow_exceptions=*/false);
  if (element.is_discarded()) {
    return Malformed("a JSON value as element " + std::to_string(elements_) + " before it");
  }
  element_.clear();
  ++elements_;
  stopped_ = !each_(std::move(element));
  return Status::Ok();
}

// Steps per byte: outside an element, the array's punctuation; inside one, only what moves
// its end (strings, escapes, nesting); at depth 0 a `,` or `]` ends it (EndElement).
Status JsonArraySplitter::Feed(std::string_view piece) {
  size_t start = 0;  // where the current element's bytes begin in `piece`
  for (size_t i = 0; i < piece.size() && !stopped_; ++i, ++offset_) {
    const char c = piece[i];
    if (where_ != Where::kInElement) {
      if (IsSpace(c)) continue;
      if (where_ == Where::kBeforeArray) {
        if (c != '[') return Malformed("'['");
        where_ = Where::kBeforeElement;
      } else if (where_ == Where::kBeforeElement && c == ']' && empty_ok_) {
        where_ = Where::kAfterArray;
      } else if (where_ == Where::kBeforeElement && c != ']' && c != ',') {
        where_ = Where::kInElement;  // this byte is the element's first: scanned below
        start = i;
        depth_ = 0;
        in_string_ = escaped_ = false;
      } else {
        return Malformed(where_ == Where::kAfterArray ? "the end of the text" : "a value");
      }
      if (where_ != Where::kInElement) continue;
    }
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if ((c == '}' || c == ']') && depth_ > 0) {
      --depth_;
    } else if (depth_ == 0 && (c == ',' || c == ']')) {
      element_.append(piece.substr(start, i - start));
      if (element_.size() > kMaxElementBytes) return Malformed("an element of at most 64 MiB");
      where_ = c == ',' ? Where::kBeforeElement : Where::kAfterArray;
      empty_ok_ = false;
      SLUICE_RETURN_IF_ERROR(EndElement());
    }
  }
  if (where_ == Where::kInElement && !stopped_) {
    element_.append(piece.substr(start));
    if (element_.size() > kMaxElementBytes) return Malformed("an element of at most 64 MiB");
  }
  return Status::Ok();
}

Status JsonArraySplitter::Finish() const {
  if (stopped_ || where_ == Where::kAfterArray) return Status::Ok();
  return Malformed(where_ == Where::kBeforeArray ? "'['" : "more: the array did not close");
}

Status ForEachElement(RestClient& rest, const std::string& path,
                      const JsonArraySplitter::Each& each) {
  JsonArraySplitter splitter(each);
  Status fed = Status::Ok();
  Status got = rest.GetStream(path, [&](std::string_view piece) {
    fed = splitter.Feed(piece);
    return fed.ok() && !splitter.stopped();
  });
  SLUICE_RETURN_IF_ERROR(got);
  SLUICE_RETURN_IF_ERROR(fed);
  return splitter.Finish();
}

}  // namespace sluice::client
