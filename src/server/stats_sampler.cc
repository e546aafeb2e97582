#include "server/stats_sampler.h"

#include <charconv>
#include <chrono>

#include "server/controller.h"
#include "server/text_parsers.h"

namespace sluice::server {

using nlohmann::json;

namespace {

bool Ended(const std::string& state) {
  return state == "DONE" || state == "EXIT" || state == "CANCELLED";
}

// Merges `next` (later) into `into`: levels from the later sample, counts summed.
void Merge(StatsSample& into, const StatsSample& next) {
  const int64_t starts = into.starts + next.starts;
  const int64_t ends = into.ends + next.ends;
  into = next;
  into.starts = starts;
  into.ends = ends;
}

}  // namespace

StatsSampler::StatsSampler(Controller& controller, StatsOptions options)
    : controller_(controller), options_(options) {}

StatsSampler::~StatsSampler() { Stop(); }

void StatsSampler::Start() {
  subscription_ = controller_.Subscribe([this](const JobEvent& e) {
    if (e.state == "RUNNING") starts_.fetch_add(1);
    if (Ended(e.state)) ends_.fetch_add(1);
  });
  thread_ = std::thread([this] { Run(); });
}

void StatsSampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (subscription_ >= 0) controller_.Unsubscribe(subscription_);
  subscription_ = -1;
}

void StatsSampler::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    SampleNow();
    lock.lock();
    cv_.wait_for(lock, std::chrono::seconds(options_.interval_seconds),
                 [this] { return stopping_; });
  }
}

void StatsSampler::SampleNow() {
  if (!controller_.Writable()) return;  // a standby has no cluster to sample
  StatsSample sample;
  controller_.SampleStats(sample, false);
  sample.starts = starts_.exchange(0);
  sample.ends = ends_.exchange(0);
  std::lock_guard lock(mu_);
  ring_.push_back(std::move(sample));
  while (ring_.size() > options_.capacity) ring_.pop_front();
}

json StatsSampler::SampleJson(const StatsSample& s) {
  json queues = json::object();
  for (const QueueSample& q : s.queues) {
    queues[q.name] = {{"pending", q.pending},
                      {"held", q.held},
                      {"running", q.running},
                      {"used_slots", q.used_slots}};
  }
  return {{"time", s.time},
          {"hosts", s.hosts},
          {"hosts_ok", s.hosts_ok},
          {"slots", s.slots},
          {"used_slots", s.used_slots},
          {"running", s.running},
          {"admitting", s.admitting},
          {"pending", s.pending},
          {"held", s.held},
          {"starts", s.starts},
          {"ends", s.ends},
          {"queues", std::move(queues)}};
}

// Steps: 1. parse `since` and `points`; 2. copy the samples after `since`; 3. merge
// neighbours so that at most `points` remain; 4. add "now", a fresh sample with job counts.
Result<json> StatsSampler::Json(const std::map<std::string, std::string>& query) {
  int64_t since = 0;
  int64_t points = 360;
  const int64_t capacity = static_cast<int64_t>(options_.capacity);
  for (const auto& [key, value] : query) {
    Result<int64_t> n =
        key == "since" ? QueryInteger(key, value, 0, int64_t{1} << 40)
        : key == "points"
            ? QueryInteger(key, value, 1, capacity)
            : Result<int64_t>(InvalidArgument(key + ": unknown query parameter (since, points)"));
    if (!n) return n.error();
    (key == "since" ? since : points) = *n;
  }
  std::vector<StatsSample> samples;
  {
    std::lock_guard lock(mu_);
    for (const StatsSample& s : ring_) {
      if (s.time > since) samples.push_back(s);
    }
  }
  const size_t per = (samples.size() + points - 1) / static_cast<size_t>(points);
  json out = json::array();
  for (size_t at = 0; at < samples.size(); at += std::max<size_t>(per, 1)) {
    StatsSample merged = samples[at];
    for (size_t i = at + 1; i < std::min(samples.size(), at + per); ++i) Merge(merged, samples[i]);
    out.push_back(SampleJson(merged));
  }
  StatsSample now;
  controller_.SampleStats(now, true);
  json now_json = SampleJson(now);
  now_json.erase("starts");
  now_json.erase("ends");
  now_json["jobs_by_state"] = now.jobs_by_state;
  now_json["pending_by_reason"] = now.pending_by_reason;
  json users = json::object();
  for (const auto& [user, u] : now.users) {
    users[user] = {
        {"running", u.running}, {"pending", u.pending}, {"held", u.held}, {"slots", u.slots}};
  }
  now_json["users"] = std::move(users);
  return json{{"interval", options_.interval_seconds},
              {"capacity", options_.capacity},
              {"samples", std::move(out)},
              {"now", std::move(now_json)}};
}

}  // namespace sluice::server
