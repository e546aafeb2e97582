// JsonArraySplitter: the elements of a JSON array as its text arrives piece by piece (a
// streamed GET /v1/jobs, issue 45). Each complete top-level element is parsed alone with
// nlohmann-json and handed on, so the client holds one job object at a time, not the whole
// document (a million jobs are a gigabyte of JSON). We kept the API's plain array rather than
// adding NDJSON: existing clients (curl | jq, DRMAA, scripts) read the same reply.
//
// Representation: a scanner over the bytes that knows only what it needs to find where an
// element ends: the nesting depth of brackets and braces, whether it is inside a string and
// just after a backslash. The current element's bytes are kept until its end (a `,` or the
// closing `]` at depth 0), then parsed; nlohmann-json checks the element itself.
// Errors (kInternal: the controller wrote it, so a bad one is its fault or the connection's):
// the message names the byte offset and what was expected there.
// Thread-safety: one splitter per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"
#include "client/rest_client.h"

namespace sluice::client {

class JsonArraySplitter {
 public:
  // Called with each element in order; false stops the splitter (Feed then returns Ok and
  // ignores what follows).
  using Each = std::function<bool(nlohmann::json element)>;
  // An element longer than this is refused (a client must not grow without bound either).
  static constexpr size_t kMaxElementBytes = size_t{64} << 20;

  explicit JsonArraySplitter(Each each) : each_(std::move(each)) {}

  // The next piece of the text. Errors: kInternal (malformed, or an element too long).
  Status Feed(std::string_view piece);
  // After the last piece: Ok when the array closed (or `each` stopped it), else kInternal.
  Status Finish() const;
  int64_t elements() const { return elements_; }
  bool stopped() const { return stopped_; }

 private:
  // An element ends at the `,` or `]` after it, so no state sits between the two.
  enum class Where { kBeforeArray, kBeforeElement, kInElement, kAfterArray };
  // Ends the current element: parses it and hands it on.
  Status EndElement();
  Status Malformed(const std::string& expected) const;

  Each each_;
  Where where_ = Where::kBeforeArray;
  std::string element_;  // the current element's text
  int depth_ = 0;        // brackets and braces open inside the current element
  bool in_string_ = false;
  bool escaped_ = false;  // the previous byte was a backslash inside a string
  bool stopped_ = false;
  bool empty_ok_ = true;  // `]` may follow: right after `[`, not after `,`
  int64_t offset_ = 0;    // bytes consumed before the current one
  int64_t elements_ = 0;
};

// GET `path` (a JSON array), each element to `each` as it arrives (RestClient::GetStream).
// Errors: the request's, or the splitter's.
Status ForEachElement(RestClient& rest, const std::string& path,
                      const JsonArraySplitter::Each& each);

}  // namespace sluice::client
