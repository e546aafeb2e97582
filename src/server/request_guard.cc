#include "server/request_guard.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "base/utf8.h"
#include "server/connection_guard.h"
#include "server/text_parsers.h"
#include "wire/protocol_version.h"

namespace sluice::server {

using nlohmann::json;

namespace {

// Bytes 0x20..0x7e kept, others shown as '?': text from the network that goes into a message.
std::string Printable(std::string_view text, size_t max = 64) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  if (text.size() > max) out += "...";
  return out;
}

// A non-recursive walk over JSON text that keeps the path to the current value: one frame
// per open array or object (at most max_depth + 1 of them).
class JsonScanner {
 public:
  JsonScanner(std::string_view text, int max_depth) : text_(text), max_depth_(max_depth) {}

  // Scans up to `stop` (exclusive); stops early at the first problem found.
  Status Scan(size_t stop) {
    for (pos_ = 0; pos_ < std::min(stop, text_.size());) {
      const char c = text_[pos_];
      if (c == '"') {
        ScanString();
      } else if (c == '[' || c == '{') {
        if (static_cast<int>(frames_.size()) >= max_depth_) {
          return InvalidArgument(Where() + ": nesting deeper than " + std::to_string(max_depth_) +
                                 " at byte " + std::to_string(pos_));
        }
        frames_.push_back(Frame{.array = c == '[', .expect_key = c == '{'});
        ++pos_;
      } else if (c == ']' || c == '}') {
        if (!frames_.empty()) frames_.pop_back();
        ++pos_;
      } else if (c == ',') {
        if (!frames_.empty() && frames_.back().array) {
          ++frames_.back().index;
        } else if (!frames_.empty()) {
          frames_.back().expect_key = true;
          frames_.back().key.clear();
        }
        ++pos_;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        SLUICE_RETURN_IF_ERROR(ScanNumber());
      } else {
        ++pos_;
      }
    }
    return Status::Ok();
  }

  // `jobs[1].tasks`, or "body" at the top level.
  std::string Where() const {
    std::string path = Path();
    return path.empty() ? "body" : path;
  }

  std::string Path() const {
    std::string path;
    for (const Frame& frame : frames_) {
      if (frame.array) {
        path += "[" + std::to_string(frame.index) + "]";
      } else if (!frame.key.empty() || !frame.expect_key) {
        path += (path.empty() ? "" : ".") + Printable(frame.key);
      }
    }
    return path;
  }

 private:
  struct Frame {
    bool array = false;
    size_t index = 0;
    bool expect_key = false;  // objects: the next string is a key
    std::string key;          // objects: the current key (first 64 bytes)
  };

  void ScanString() {
    const size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') pos_ += text_[pos_] == '\\' ? 2 : 1;
    if (!frames_.empty() && frames_.back().expect_key) {
      Frame& top = frames_.back();
      top.key = std::string(text_.substr(start, std::min<size_t>(pos_ - start, 64)));
      top.expect_key = false;
    }
    ++pos_;
  }

  Status ScanNumber() {
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           std::string_view("0123456789+-.eE").find(text_[pos_]) != std::string_view::npos) {
      ++pos_;
    }
    const std::string_view token = text_.substr(start, pos_ - start);
    // Integers of up to 18 digits fit; anything else is read as a double by the parser.
    if (token.size() <= 18 && token.find_first_of(".eE") == std::string_view::npos) {
      return Status::Ok();
    }
    const std::string copy(token);
    const double value = std::strtod(copy.c_str(), nullptr);
    if (!std::isfinite(value)) {
      return InvalidArgument(Where() + ": number " + Printable(token, 24) + " out of range");
    }
    return Status::Ok();
  }

  std::string_view text_;
  int max_depth_;
  size_t pos_ = 0;
  std::vector<Frame> frames_;
};

}  // namespace

Status CheckUtf8(std::string_view text, const std::string& where) {
  const size_t bad = FirstInvalidUtf8(text);
  if (bad == std::string_view::npos) return Status::Ok();
  return InvalidArgument(where + ": invalid UTF-8 at byte " + std::to_string(bad));
}

Status ScanJson(std::string_view text, int max_depth) {
  JsonScanner scanner(text, max_depth);
  return scanner.Scan(text.size());
}

std::string JsonPathAt(std::string_view text, size_t offset) {
  JsonScanner scanner(text, kMaxJsonDepth);
  (void)scanner.Scan(offset);
  return scanner.Path();
}

Result<json> ParseJsonBody(std::string_view body, size_t limit) {
  if (body.size() > limit) {
    return Status(StatusCode::kResourceExhausted, "body: " + std::to_string(body.size()) +
                                                      " bytes exceed the limit of " +
                                                      std::to_string(limit));
  }
  if (const size_t bad = FirstInvalidUtf8(body); bad != std::string_view::npos) {
    const std::string path = JsonPathAt(body, bad);
    return InvalidArgument((path.empty() ? "body" : path) + ": invalid UTF-8 at byte " +
                           std::to_string(bad));
  }
  SLUICE_RETURN_IF_ERROR(ScanJson(body));
  try {
    return json::parse(body);
  } catch (const json::parse_error& e) {
    const size_t at = e.byte > 0 ? e.byte - 1 : 0;
    const std::string path = JsonPathAt(body, at);
    return InvalidArgument("malformed JSON at byte " + std::to_string(e.byte) +
                           (path.empty() ? "" : " (" + path + ")") + ": " +
                           Printable(e.what(), 200));
  } catch (const json::exception& e) {
    return InvalidArgument("malformed JSON: " + Printable(e.what(), 200));
  }
}

Result<int64_t> ParseJobId(std::string_view text) {
  const std::optional<int64_t> id = ParseInteger(text);
  if (!id || *id < 1) {
    return InvalidArgument("job id: expected an integer in [1, 9223372036854775807], got '" +
                           Printable(text, 32) + "'");
  }
  return *id;
}

std::string SafeDump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

using HandlerResponse = httplib::Server::HandlerResponse;

HandlerResponse Refuse(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(SafeDump(json{{"error", message}}), "application/json");
  return HandlerResponse::Handled;
}

HandlerResponse Refuse(httplib::Response& res, const Status& status, int http_status) {
  return Refuse(res, http_status, status.message());
}

bool Identity(const std::string& value) {
  std::string lower;
  for (char c : value) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.empty() || lower == "identity";
}

// The path and query: length and UTF-8.
Status CheckTarget(const httplib::Request& req) {
  SLUICE_RETURN_IF_ERROR(CheckUtf8(req.path, "path"));
  for (const auto& [key, value] : req.params) {
    SLUICE_RETURN_IF_ERROR(CheckUtf8(key, "query parameter name"));
    SLUICE_RETURN_IF_ERROR(CheckUtf8(value, "query parameter " + key));
  }
  return Status::Ok();
}

// The announced body length (0 when none), or -1 when Content-Length is malformed.
int64_t AnnouncedLength(const httplib::Request& req) {
  if (!req.has_header("Content-Length")) return 0;
  const std::string text = req.get_header_value("Content-Length");
  const std::optional<int64_t> length = ParseInteger(text);
  if (!length || *length < 0 || *length > (int64_t{1} << 62)) return -1;
  return *length;
}

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Steps: 1. the target (414, 400); 2. encodings (415, 411); 3. the length (400, 413);
// 4. the protocol version (400, wire/protocol_version.h); 5. the credential when a body
// follows; 6. the connection's share (ConnectionGuard, 503).
HandlerResponse Guard(const RequestGuardOptions& options, const httplib::Request& req,
                      httplib::Response& res) {
  if (req.path.size() > kMaxPathBytes) {
    return Refuse(res, 414,
                  "path: " + std::to_string(req.path.size()) + " bytes exceed the limit of " +
                      std::to_string(kMaxPathBytes));
  }
  if (Status target = CheckTarget(req); !target.ok()) return Refuse(res, target, 400);
  const int64_t length = AnnouncedLength(req);
  if (length < 0) {
    ConnectionGuard::StopReading(0);
    return Refuse(res, 400, "Content-Length: expected a number of bytes");
  }
  if (!Identity(req.get_header_value("Content-Encoding"))) {
    ConnectionGuard::StopReading(length);
    return Refuse(res, 415,
                  "Content-Encoding: '" + Printable(req.get_header_value("Content-Encoding")) +
                      "' is not accepted; send the body uncompressed");
  }
  if (!Identity(req.get_header_value("Transfer-Encoding"))) {
    ConnectionGuard::StopReading(0);
    return Refuse(res, 411,
                  "Transfer-Encoding: chunked bodies are not accepted; send the body "
                  "with Content-Length");
  }
  const size_t limit =
      EndsWith(req.path, "/batch") ? options.max_batch_body_bytes : options.max_body_bytes;
  if (static_cast<uint64_t>(length) > limit) {
    ConnectionGuard::StopReading(length);
    return Refuse(
        res, 413,
        "body: " + std::to_string(length) + " bytes exceed the limit of " + std::to_string(limit));
  }
  if (Status served = wire::CheckProtocolHeader(req.get_header_value(wire::kProtocolHeader));
      !served.ok()) {
    ConnectionGuard::StopReading(length);
    res.status = 400;
    res.set_content(SafeDump(wire::ProtocolRefusalBody(served)), "application/json");
    return HandlerResponse::Handled;
  }
  if (length > 0 && options.authenticate) {
    if (Status refused = options.authenticate(req); !refused.ok()) {
      ConnectionGuard::StopReading(length);
      return Refuse(res, refused.code() == StatusCode::kPermissionDenied ? 403 : 401,
                    refused.message());
    }
  }
  if (Status share = ConnectionGuard::OnHeaders(req.path, length > 0); !share.ok()) {
    ConnectionGuard::StopReading(length);
    return Refuse(res, share, 503);
  }
  if (options.front && options.front(req, res)) {
    ConnectionGuard::StopReading(length);  // answered before the body was read
    return HandlerResponse::Handled;
  }
  return HandlerResponse::Unhandled;
}

}  // namespace

void InstallRequestGuard(httplib::Server& server, RequestGuardOptions options) {
  server.set_pre_routing_handler(
      [options = std::move(options)](const httplib::Request& req, httplib::Response& res) {
        return Guard(options, req, res);
      });
}

}  // namespace sluice::server
