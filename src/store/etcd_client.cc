// EtcdClient over cpp-httplib and nlohmann::json (see etcd_client.h). The gateway's JSON is
// proto3's mapping of etcd's api/etcdserverpb/rpc.proto: int64 as strings, bytes as base64,
// fields at their default value (false, 0, "") left out.
#include "store/etcd_client.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

namespace sluice::store {
namespace {

using Json = nlohmann::json;

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int64_t Int(const Json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end()) return 0;
  if (it->is_string()) return std::strtoll(it->get<std::string>().c_str(), nullptr, 10);
  if (it->is_number_integer()) return it->get<int64_t>();
  return 0;
}

std::string Bytes(const Json& j, const char* field) {
  auto it = j.find(field);
  std::string out;
  if (it != j.end() && it->is_string()) (void)Base64Decode(it->get<std::string>(), out);
  return out;
}

EtcdKv ParseKv(const Json& j) {
  return EtcdKv{.key = Bytes(j, "key"),
                .value = Bytes(j, "value"),
                .create_revision = Int(j, "create_revision"),
                .mod_revision = Int(j, "mod_revision"),
                .lease = Int(j, "lease")};
}

int64_t HeaderRevision(const Json& j) {
  auto it = j.find("header");
  return it != j.end() ? Int(*it, "revision") : 0;
}

// etcd's gRPC code (in the gateway's error body) to ours.
Status GrpcError(int code, const std::string& message) {
  const std::string text = "etcd: " + message;
  switch (code) {
    case 3:   // InvalidArgument
    case 11:  // OutOfRange
      return InvalidArgument(text);
    case 5:  // NotFound
      return NotFound(text);
    case 9:  // FailedPrecondition
      return FailedPrecondition(text);
    case 7:   // PermissionDenied
    case 16:  // Unauthenticated
      return Status(StatusCode::kPermissionDenied, text);
    case 8:  // ResourceExhausted
      return Status(StatusCode::kResourceExhausted, text);
    default:  // Unavailable, DeadlineExceeded, Aborted, Unknown...: try again later
      return Status(StatusCode::kUnavailable, text);
  }
}

// One txn operation as the gateway's JSON, appended to `out` (without building a JSON tree).
void AppendOp(std::string& out, const EtcdOp& op, bool comma) {
  if (comma) out += ',';
  if (op.kind == EtcdOp::Kind::kDelete) {
    out += "{\"request_delete_range\":{\"key\":\"";
    AppendBase64(out, op.key);
    out += "\"}}";
    return;
  }
  out += "{\"request_put\":{\"key\":\"";
  AppendBase64(out, op.key);
  if (op.lease != 0) {
    out += "\",\"lease\":\"";
    out += std::to_string(op.lease);
  }
  out += "\",\"value\":\"";
  AppendBase64(out, op.value);
  out += "\"}}";
}

Json ToJson(const EtcdCompare& c) {
  Json j = {{"key", Base64Encode(c.key)}, {"result", "EQUAL"}};
  switch (c.target) {
    case EtcdCompare::Target::kCreate:
      j["target"] = "CREATE";
      j["create_revision"] = std::to_string(c.revision);
      break;
    case EtcdCompare::Target::kMod:
      j["target"] = "MOD";
      j["mod_revision"] = std::to_string(c.revision);
      break;
    case EtcdCompare::Target::kValue:
      j["target"] = "VALUE";
      j["value"] = Base64Encode(c.value);
      break;
  }
  return j;
}

std::pair<std::string, int> HostPort(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos) return {endpoint, 2379};
  return {endpoint.substr(0, colon), std::atoi(endpoint.c_str() + colon + 1)};
}

}  // namespace

void AppendBase64(std::string& out, std::string_view bytes) {
  out.reserve(out.size() + (bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (uint32_t(uint8_t(bytes[i])) << 16) |
                       (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
    const char quad[4] = {kAlphabet[(n >> 18) & 63], kAlphabet[(n >> 12) & 63],
                          kAlphabet[(n >> 6) & 63], kAlphabet[n & 63]};
    out.append(quad, 4);
  }
  if (i < bytes.size()) {
    uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
}

std::string Base64Encode(const std::string& bytes) {
  std::string out;
  AppendBase64(out, bytes);
  return out;
}

bool Base64Decode(const std::string& text, std::string& bytes) {
  bytes.clear();
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    const char* pos = std::strchr(kAlphabet, c);
    if (pos == nullptr || c == '\0') return false;
    bits = (bits << 6) | static_cast<uint32_t>(pos - kAlphabet);
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return true;
}

std::string PrefixRangeEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<uint8_t>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<uint8_t>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

class EtcdClient::Connection {
 public:
  Connection(const std::string& endpoint, std::chrono::milliseconds timeout)
      : client_(HostPort(endpoint).first, HostPort(endpoint).second) {
    client_.set_connection_timeout(std::chrono::milliseconds(300));
    client_.set_read_timeout(timeout);
    client_.set_write_timeout(timeout);
    client_.set_keep_alive(true);
    // Headers and body go out in two writes: without this, Nagle's algorithm waits for the
    // peer's delayed ACK (~40 ms) on every call.
    client_.set_tcp_nodelay(true);
  }
  httplib::Client& client() { return client_; }

 private:
  httplib::Client client_;
};

EtcdClient::EtcdClient(std::vector<std::string> endpoints, std::chrono::milliseconds timeout)
    : endpoints_(std::move(endpoints)), timeout_(timeout) {
  for (const std::string& e : endpoints_) {
    connections_.push_back(std::make_unique<Connection>(e, timeout));
  }
}

EtcdClient::~EtcdClient() = default;

Result<Json> EtcdClient::Call(const std::string& path, const std::string& body,
                              const Json::parser_callback_t& filter) {
  std::string last_error = "no endpoint";
  // A large txn (thousands of rows, megabytes) takes etcd longer to decode, log and apply than
  // the timeout meant for detecting a lost member: 1 ms more per KiB sent (8 s for 8 MiB).
  const std::chrono::milliseconds wait = timeout_ + std::chrono::milliseconds(body.size() / 1024);
  for (size_t attempt = 0; attempt < endpoints_.size(); ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    httplib::Client& client = connections_[current_]->client();
    client.set_read_timeout(wait);
    client.set_write_timeout(wait);
    httplib::Result res = client.Post(path, body, "application/json");
    if (res) {
      Json j = Json::parse(res->body, filter, /*allow_exceptions=*/false);
      if (res->status == 200 && j.is_object()) return j;
      if (j.is_object() && j.contains("code")) {
        Status error = GrpcError(static_cast<int>(Int(j, "code")), j.value("message", ""));
        current_ = (current_ + 1) % endpoints_.size();  // maybe a member without quorum
        return error;
      }
      current_ = (current_ + 1) % endpoints_.size();
      return Status(StatusCode::kUnavailable, "etcd " + endpoints_[current_] + path + ": http " +
                                                  std::to_string(res->status));
    }
    const httplib::Error error = res.error();
    last_error = "etcd " + endpoints_[current_] + path + ": " + httplib::to_string(error);
    current_ = (current_ + 1) % endpoints_.size();
    // Not sent (cannot connect, or the kept-alive connection was found closed at once): the
    // next endpoint may serve it. Sent and no answer within the timeout: maybe applied.
    const bool quick = std::chrono::steady_clock::now() - start < timeout_ / 2;
    const bool not_sent =
        error == httplib::Error::Connection || error == httplib::Error::ConnectionTimeout ||
        error == httplib::Error::Write || (error == httplib::Error::Read && quick);
    if (!not_sent) break;
  }
  return Status(StatusCode::kUnavailable, last_error);
}

Result<EtcdRange> EtcdClient::Range(const std::string& key, const std::string& range_end,
                                    int64_t limit, int64_t revision) {
  Json req = {{"key", Base64Encode(key)}};
  if (!range_end.empty()) req["range_end"] = Base64Encode(range_end);
  if (limit > 0) req["limit"] = std::to_string(limit);
  if (revision > 0) req["revision"] = std::to_string(revision);
  Result<Json> body = Call("/v3/kv/range", req.dump());
  if (!body) return body.error();
  const Json& j = *body;
  EtcdRange out{.revision = HeaderRevision(j), .more = j.value("more", false)};
  if (j.contains("kvs")) {
    for (const Json& kv : j["kvs"]) out.kvs.push_back(ParseKv(kv));
  }
  return out;
}

// The request is written as text (base64 needs no JSON escaping), not built as a JSON tree: a
// txn may hold thousands of rows. A successful txn's answer lists one response per operation;
// only `succeeded` and the header are read, so that list is skipped while parsing.
Result<EtcdTxnResult> EtcdClient::Txn(const std::vector<EtcdCompare>& compares,
                                      const std::vector<EtcdOp>& success,
                                      const std::string& failure_range_key) {
  size_t size = 64;
  for (const EtcdOp& op : success) size += (op.key.size() + op.value.size()) * 4 / 3 + 64;
  std::string req;
  req.reserve(size);
  req += "{\"compare\":[";
  for (size_t i = 0; i < compares.size(); ++i) {
    req += (i > 0 ? "," : "") + ToJson(compares[i]).dump();
  }
  req += "],\"success\":[";
  for (size_t i = 0; i < success.size(); ++i) AppendOp(req, success[i], i > 0);
  req += ']';
  if (!failure_range_key.empty()) {
    req += ",\"failure\":[{\"request_range\":{\"key\":\"";
    AppendBase64(req, failure_range_key);
    req += "\"}}]";
  }
  req += '}';
  bool succeeded = false;
  const Json::parser_callback_t skip_responses = [&](int depth, Json::parse_event_t event,
                                                     Json& parsed) {
    if (depth != 1) return true;
    if (event == Json::parse_event_t::value && parsed.is_boolean()) succeeded = parsed.get<bool>();
    return !(event == Json::parse_event_t::key && succeeded && parsed == "responses");
  };
  Result<Json> body = Call("/v3/kv/txn", req, skip_responses);
  if (!body) return body.error();
  const Json& j = *body;
  EtcdTxnResult out{.succeeded = j.value("succeeded", false), .revision = HeaderRevision(j)};
  if (!out.succeeded && j.contains("responses")) {
    for (const Json& r : j["responses"]) {
      if (!r.contains("response_range") || !r["response_range"].contains("kvs")) continue;
      for (const Json& kv : r["response_range"]["kvs"]) out.failure_kvs.push_back(ParseKv(kv));
    }
  }
  return out;
}

Result<EtcdLease> EtcdClient::GrantLease(int64_t ttl_seconds) {
  Result<Json> body = Call("/v3/lease/grant", Json{{"TTL", std::to_string(ttl_seconds)}}.dump());
  if (!body) return body.error();
  const Json& j = *body;
  EtcdLease lease{.id = Int(j, "ID"), .ttl = Int(j, "TTL")};
  if (lease.id == 0) return Internal("etcd: lease grant answered no lease");
  return lease;
}

Result<EtcdLease> EtcdClient::KeepAlive(int64_t lease_id) {
  // A client stream on the gateway: one request in the body, one result object out.
  Result<Json> body = Call("/v3/lease/keepalive", Json{{"ID", std::to_string(lease_id)}}.dump());
  if (!body) return body.error();
  const Json& j = *body;
  if (j.contains("error")) {
    const Json& e = j["error"];
    return GrpcError(static_cast<int>(Int(e, "grpc_code")), e.value("message", "keepalive"));
  }
  const Json result = j.value("result", Json::object());
  return EtcdLease{.id = lease_id, .ttl = Int(result, "TTL")};
}

Status EtcdClient::RevokeLease(int64_t lease_id) {
  Result<Json> body = Call("/v3/lease/revoke", Json{{"ID", std::to_string(lease_id)}}.dump());
  return body ? Status::Ok() : body.error();
}

Status EtcdClient::Compact(int64_t revision) {
  Result<Json> body =
      Call("/v3/kv/compaction", Json{{"revision", std::to_string(revision)}}.dump());
  return body ? Status::Ok() : body.error();
}

Result<bool> EtcdClient::WaitForDelete(const std::string& key, int64_t start_revision,
                                       std::chrono::milliseconds wait) {
  auto [host, port] = HostPort(current_endpoint());
  httplib::Client client(host, port);
  client.set_connection_timeout(std::chrono::milliseconds(300));
  client.set_read_timeout(wait);
  Json create = {{"key", Base64Encode(key)}, {"start_revision", std::to_string(start_revision)}};
  httplib::Request req;
  req.method = "POST";
  req.path = "/v3/watch";
  req.body = Json{{"create_request", create}}.dump();
  req.set_header("Content-Type", "application/json");
  std::string buffer;
  bool deleted = false;
  // The gateway streams one JSON object per line; stop reading at the first DELETE.
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    buffer.append(data, n);
    for (size_t eol; (eol = buffer.find('\n')) != std::string::npos; buffer.erase(0, eol + 1)) {
      Json line = Json::parse(buffer.substr(0, eol), nullptr, false);
      const Json result = line.is_object() ? line.value("result", Json::object()) : Json::object();
      for (const Json& ev : result.value("events", Json::array())) {
        if (ev.value("type", "") == "DELETE") deleted = true;
      }
    }
    return !deleted;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  const auto start = std::chrono::steady_clock::now();
  client.send(req, res, error);
  if (deleted) return true;
  if (error == httplib::Error::Read || std::chrono::steady_clock::now() - start >= wait) {
    return false;  // waited the whole time: no event
  }
  current_ = (current_ + 1) % endpoints_.size();
  return Status(StatusCode::kUnavailable, "etcd watch: " + httplib::to_string(error));
}

}  // namespace sluice::store
