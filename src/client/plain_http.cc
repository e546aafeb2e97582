// The plain-HTTP carrier of client/http_transport.h: HTTP/1.1 over one blocking TCP socket,
// kept open between requests (keep-alive), nothing but libc.
//
// Request: the head and the body in one write (no Nagle wait for a second segment) with
// TCP_NODELAY. Answer: the status line, the headers (Content-Length, Transfer-Encoding:
// chunked, Location, Connection: close), then the body by its length, its chunks, or until the
// server closes; for Stream, a 2xx body goes to the sink piece by piece as it is read (issue 45).
// A kept connection the server has closed meanwhile (readable or hung up before a request) is
// replaced before sending.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "client/http_transport.h"
#include "wire/leader_follow.h"

namespace sluice::client {
namespace {

struct Endpoint {
  std::string host;
  std::string port;
};

// "http://host[:port]" or "http://[v6]:port" -> host and port (80 when absent).
Endpoint ParseEndpoint(const std::string& base_url) {
  std::string rest = base_url.substr(base_url.find("://") + 3);
  Endpoint endpoint{.host = rest, .port = "80"};
  if (!rest.empty() && rest[0] == '[') {
    const size_t close = rest.find(']');
    endpoint.host = rest.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    if (close != std::string::npos && close + 1 < rest.size() && rest[close + 1] == ':') {
      endpoint.port = rest.substr(close + 2);
    }
    return endpoint;
  }
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos) {
    endpoint.host = rest.substr(0, colon);
    endpoint.port = rest.substr(colon + 1);
  }
  return endpoint;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Connects with a bounded wait; -1 when no address answered.
int ConnectTo(const Endpoint& endpoint, std::chrono::seconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(endpoint.host.c_str(), endpoint.port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
      int error = 0;
      socklen_t length = sizeof(error);
      rc = poll(&p, 1, static_cast<int>(timeout.count() * 1000)) == 1 &&
                   getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
               ? 0
               : -1;
    }
    if (rc != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return -1;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

class PlainTransport final : public HttpTransport {
 public:
  PlainTransport(const std::string& url, const TransportOptions& options)
      : endpoint_(ParseEndpoint(wire::BaseUrl(url))), options_(options) {
    const std::string base = wire::BaseUrl(url);
    host_header_ = base.substr(base.find("://") + 3);
  }
  ~PlainTransport() override { Close(); }

  HttpReply Send(std::string_view method, const std::string& path, const HttpHeaders& headers,
                 const std::string& body) override {
    return Exchange(method, path, headers, body, nullptr);
  }

  HttpReply Stream(const std::string& path, const HttpHeaders& headers,
                   const BodySink& sink) override {
    return Exchange("GET", path, headers, "", &sink);
  }

 private:
  // Where a body goes: into the reply, or (a 2xx answer to Stream) to the sink.
  struct BodyOut {
    std::string* text;
    const BodySink* sink;  // null: into `text`
    bool stopped = false;  // the sink asked to stop
    bool Put(std::string_view piece) {
      if (sink == nullptr) {
        text->append(piece);
        return true;
      }
      stopped = stopped || !(*sink)(piece);
      return !stopped;
    }
  };

  HttpReply Exchange(std::string_view method, const std::string& path, const HttpHeaders& headers,
                     const std::string& body, const BodySink* sink) {
    if (fd_ >= 0 && !StillOpen()) Close();
    if (fd_ < 0) {
      fd_ = ConnectTo(endpoint_, options_.connect_timeout);
      if (fd_ < 0) return Failed(HttpReply::Failure::kConnection, "Could not establish connection");
      SetTimeouts();
      buffer_.clear();
    }
    if (!WriteAll(Head(method, path, headers, body) + body)) {
      return Failed(HttpReply::Failure::kMaybeSent, "Failed to write connection");
    }
    HttpReply reply;
    if (!ReadReply(method, reply, sink)) {
      const bool streamed = reply.streamed;
      HttpReply failed = Failed(HttpReply::Failure::kMaybeSent, "Failed to read connection");
      failed.streamed = streamed;
      return failed;
    }
    if (!keep_) Close();
    return reply;
  }

  std::string Head(std::string_view method, const std::string& path, const HttpHeaders& headers,
                   const std::string& body) const {
    std::string head;
    head.reserve(256 + body.size());
    head.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: ");
    head.append(host_header_).append("\r\nAccept: */*\r\nUser-Agent: sluice\r\n");
    for (const auto& [name, value] : headers)
      head.append(name).append(": ").append(value) += "\r\n";
    if (method != "GET") {
      head.append("Content-Type: application/json\r\nContent-Length: ");
      head.append(std::to_string(body.size())).append("\r\n");
    }
    head.append("\r\n");
    return head;
  }

  // A kept connection is usable when nothing is waiting on it (the server has not closed it).
  bool StillOpen() const {
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    return poll(&p, 1, 0) == 0;
  }

  void SetTimeouts() {
    timeval tv{.tv_sec = static_cast<time_t>(options_.timeout.count()), .tv_usec = 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  }

  bool WriteAll(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // Appends what the socket has to buffer_; false at the end of the stream or an error.
  bool Fill() {
    char chunk[16384];
    while (true) {
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
      return true;
    }
  }

  // One CRLF-terminated line from buffer_ (filled as needed), without the CRLF.
  bool ReadLine(std::string& line) {
    size_t end;
    while ((end = buffer_.find("\r\n")) == std::string::npos) {
      if (buffer_.size() > (1u << 20) || !Fill()) return false;
    }
    line.assign(buffer_, 0, end);
    buffer_.erase(0, end + 2);
    return true;
  }

  // `length` bytes to `out`, each piece as soon as it is read. A sink that stops: true, and
  // the connection is not kept (the rest of the body is left unread).
  bool ReadExactly(size_t length, BodyOut& out) {
    while (length > 0) {
      if (buffer_.empty() && !Fill()) return false;
      const size_t n = std::min(length, buffer_.size());
      const bool more = out.Put(std::string_view(buffer_).substr(0, n));
      buffer_.erase(0, n);
      length -= n;
      if (!more) {
        keep_ = false;
        return true;
      }
    }
    return true;
  }

  bool ReadChunked(BodyOut& out) {
    std::string line;
    while (true) {
      if (!ReadLine(line)) return false;
      const size_t size = std::strtoul(line.c_str(), nullptr, 16);
      if (size == 0) break;
      if (!ReadExactly(size, out)) return false;
      if (out.stopped) return true;
      if (!ReadLine(line)) return false;
    }
    do {  // trailers up to the empty line
      if (!ReadLine(line)) return false;
    } while (!line.empty());
    return true;
  }

  bool ReadReply(std::string_view method, HttpReply& reply, const BodySink* sink);

  HttpReply Failed(HttpReply::Failure failure, const std::string& why) {
    Close();
    HttpReply reply;
    reply.failure = failure;
    reply.error = why;
    return reply;
  }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    buffer_.clear();
  }

  Endpoint endpoint_;
  TransportOptions options_;
  std::string host_header_;
  int fd_ = -1;
  bool keep_ = true;
  std::string buffer_;
};

bool PlainTransport::ReadReply(std::string_view method, HttpReply& reply, const BodySink* sink) {
  std::string line;
  if (!ReadLine(line) || line.compare(0, 5, "HTTP/") != 0) return false;
  const size_t space = line.find(' ');
  if (space == std::string::npos) return false;
  reply.status = std::atoi(line.c_str() + space + 1);
  keep_ = line.compare(0, 8, "HTTP/1.0") != 0;
  long long length = -1;
  bool chunked = false;
  while (true) {
    if (!ReadLine(line)) return false;
    if (line.empty()) break;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string_view name(line.data(), colon);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t") + 1);
    if (EqualsNoCase(name, "Content-Length")) length = std::atoll(value.c_str());
    if (EqualsNoCase(name, "Transfer-Encoding")) chunked = EqualsNoCase(value, "chunked");
    if (EqualsNoCase(name, "Location")) reply.location = value;
    if (EqualsNoCase(name, "Connection")) keep_ = !EqualsNoCase(value, "close");
  }
  if (method == "HEAD" || reply.status == 204 || reply.status == 304) return true;
  const bool to_sink = sink != nullptr && reply.status >= 200 && reply.status < 300;
  reply.streamed = to_sink;
  BodyOut out{.text = &reply.body, .sink = to_sink ? sink : nullptr};
  if (chunked) return ReadChunked(out);
  if (length >= 0) return ReadExactly(static_cast<size_t>(length), out);
  keep_ = false;  // the body ends when the server closes
  do {
    if (!buffer_.empty() && !out.Put(buffer_)) return true;
    buffer_.clear();
  } while (Fill());
  return true;
}

// Answers every request with kUntrusted: an https:// URL in a binary without the HTTPS carrier.
class NoHttps final : public HttpTransport {
 public:
  HttpReply Send(std::string_view, const std::string&, const HttpHeaders&,
                 const std::string&) override {
    HttpReply reply;
    reply.failure = HttpReply::Failure::kUntrusted;
    reply.error = "this sluice binary was built without HTTPS (run sluice-full)";
    return reply;
  }
};

TransportFactory& HttpsFactory() {
  static TransportFactory factory = nullptr;
  return factory;
}

}  // namespace

HttpReply HttpTransport::Stream(const std::string& path, const HttpHeaders& headers,
                                const BodySink& sink) {
  HttpReply reply = Send("GET", path, headers, "");
  if (reply.failure == HttpReply::Failure::kNone && reply.status >= 200 && reply.status < 300) {
    sink(reply.body);
    reply.body.clear();
    reply.streamed = true;
  }
  return reply;
}

std::unique_ptr<HttpTransport> NewPlainTransport(const std::string& base_url,
                                                 const TransportOptions& options) {
  return std::make_unique<PlainTransport>(base_url, options);
}

void SetHttpsTransport(TransportFactory factory) { HttpsFactory() = factory; }

std::unique_ptr<HttpTransport> NewTransport(const std::string& base_url,
                                            const TransportOptions& options) {
  if (base_url.rfind("https://", 0) == 0) {
    if (HttpsFactory() == nullptr) return std::make_unique<NoHttps>();
    return HttpsFactory()(base_url, options);
  }
  return NewPlainTransport(base_url, options);
}

}  // namespace sluice::client
