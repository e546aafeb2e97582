#include "wire/leader_follow.h"

#include <algorithm>

namespace sluice::wire {

Result<std::vector<std::string>> ParseServerList(const std::string& text) {
  std::vector<std::string> urls;
  size_t pos = 0;
  int index = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string url = text.substr(pos, comma - pos);
    url.erase(0, url.find_first_not_of(" \t"));
    url.erase(url.find_last_not_of(" \t") + 1);
    if (url.empty()) {
      return InvalidArgument("server list `" + text + "`: item " + std::to_string(index + 1) +
                             " is empty (expected URL[,URL...])");
    }
    if (url.find("://") == std::string::npos) url = "http://" + url;
    while (url.back() == '/') url.pop_back();
    // The HTTP library throws on another scheme (an agent given ftp:// died of it).
    const size_t host = url.find("://") + 3;
    if ((!url.starts_with("http://") && !url.starts_with("https://")) || host >= url.size()) {
      return InvalidArgument("server list `" + text.substr(0, 200) + "`: item " +
                             std::to_string(index + 1) + " `" + url.substr(0, 100) +
                             "`: expected http://HOST:PORT or https://HOST:PORT");
    }
    urls.push_back(url);
    pos = comma + 1;
    ++index;
  }
  return urls;
}

std::string BaseUrl(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  const size_t path = url.find_first_of("/?#", scheme + 3);
  return path == std::string::npos ? url : url.substr(0, path);
}

LeaderFollower::LeaderFollower(std::vector<std::string> urls, FollowOptions options)
    : urls_(std::move(urls)), options_(options) {}

void LeaderFollower::OnSuccess() {
  misses_ = 0;
  backoff_ = std::chrono::milliseconds(0);
}

std::chrono::milliseconds LeaderFollower::NextBackoff() {
  backoff_ =
      backoff_.count() == 0 ? options_.first_backoff : std::min(backoff_ * 2, options_.max_backoff);
  return backoff_;
}

std::chrono::milliseconds LeaderFollower::OnNotServed(int http_status,
                                                      const std::string& leader_hint) {
  ++misses_;
  const std::string leader = BaseUrl(leader_hint);
  if ((http_status == 307 || http_status == 503) && !leader.empty() && leader != current()) {
    auto known = std::find(urls_.begin(), urls_.end(), leader);
    if (known == urls_.end()) {
      urls_.push_back(leader);
      known = urls_.end() - 1;
    }
    current_ = static_cast<size_t>(known - urls_.begin());
  } else {
    current_ = (current_ + 1) % urls_.size();
  }
  // Every URL of a round may be tried at once; after that, wait before each try.
  if (misses_ < urls_.size()) return std::chrono::milliseconds(0);
  return NextBackoff();
}

}  // namespace sluice::wire
