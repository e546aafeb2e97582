// LeaderFollower: how the CLI and the agents find the leading controller among several
// (R-HA-2). Pure logic shared by client/rest_client.cc and agent/agent.cc; each caller keeps
// its own HTTP client for `current()` and reports every answer here.
//
// Representation: the URLs given (`--server` / `SLUICE_SERVER`, comma-separated), the index
// of the one in use, and how many answers in a row were not from a leader.
// Rules, per answer from current():
//  - success (anything but the cases below): stay; the back-off starts again;
//  - 307 with a Location: go to the leader it names (added to the list when new), at once;
//  - 503 naming a `leader` URL: the same as a redirect to it;
//  - no answer (connection failed), 503 without a leader, 409 from an older controller
//    (agents): go to the next URL; at once while some URL of this round was not tried, then
//    after a back-off that doubles from `first_backoff` up to `max_backoff`.
// Redirects count too: a loop of redirects between standbys backs off like failures.
// Thread-safety: none; one follower per HTTP client.
// Implements R-HA-2 (the clients' side).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"

namespace sluice::wire {

// "URL[,URL...]" -> URLs, each with "http://" added when it has no scheme and without a
// trailing '/'. Errors: kInvalidArgument for an empty list, an empty item, or a scheme other
// than http and https or no host (names its place).
Result<std::vector<std::string>> ParseServerList(const std::string& text);

// "http://h:p/v1/jobs?x=1" -> "http://h:p"; "" when `url` has no scheme.
std::string BaseUrl(const std::string& url);

struct FollowOptions {
  std::chrono::milliseconds first_backoff{50};
  std::chrono::milliseconds max_backoff{1000};
};

class LeaderFollower {
 public:
  // REQUIRES: !urls.empty().
  explicit LeaderFollower(std::vector<std::string> urls, FollowOptions options = {});

  const std::string& current() const { return urls_[current_]; }
  const std::vector<std::string>& urls() const { return urls_; }

  // An answer that came from a controller willing to serve: stay, reset the back-off.
  void OnSuccess();
  // `current()` did not serve: `http_status` 0 (no answer), 307, 409 or 503; `leader_hint`
  // is the 307's Location or the 503's `leader` ("" when none). Moves to the URL to try next
  // and returns how long to wait before trying it (zero: at once).
  std::chrono::milliseconds OnNotServed(int http_status, const std::string& leader_hint);

  // Whether an HTTP status means "not served here, try elsewhere".
  static bool NotServed(int http_status) {
    return http_status == 0 || http_status == 307 || http_status == 503;
  }

 private:
  std::chrono::milliseconds NextBackoff();

  std::vector<std::string> urls_;
  FollowOptions options_;
  size_t current_ = 0;
  size_t misses_ = 0;  // answers in a row that were not from a serving controller
  std::chrono::milliseconds backoff_{0};
};

}  // namespace sluice::wire
