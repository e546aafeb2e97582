#include "agent/virtual_agent.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>

#include "agent/virtual_host.h"
#include "wire/agent_batch.h"
#include "wire/leader_follow.h"
#include "wire/protocol_version.h"

namespace sluice::agent {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

struct Counters {
  std::atomic<int64_t> registered{0};
  std::atomic<int64_t> exchanges{0};
  std::atomic<bool> fatal{false};
};

struct Answer {
  int status = 0;  // 0: no response
  json body;
  std::string error;
};

std::string InstanceId() {
  std::random_device random;
  char text[17];
  std::snprintf(text, sizeof(text), "%08x%08x", random(), random());
  return text;
}

class Shard {
 public:
  Shard(const VirtualAgentOptions& options, Counters& counters, std::string url)
      : options_(options), counters_(counters), client_(url) {
    if (!options.ca_file.empty()) client_.set_ca_cert_path(options.ca_file);
    client_.set_connection_timeout(2s);
    client_.set_write_timeout(10s);
    client_.set_keep_alive(true);
    client_.set_tcp_nodelay(true);
  }

  void Add(const std::string& name) { hosts_.emplace_back(name, instance_); }

  void Run(const std::atomic<bool>& stop) {
    auto backoff = 100ms;
    while (!stop && !counters_.fatal) {
      RegisterHosts(stop);
      const TimePoint now = Clock::now();
      for (VirtualHost& host : hosts_) host.Tick(now);
      if (!Exchange(WaitFor(now))) {
        std::this_thread::sleep_for(backoff);
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, 1s);
        continue;
      }
      backoff = 100ms;
    }
    // Stopping: every job ends killed and is reported once, best effort.
    for (VirtualHost& host : hosts_) host.KillAll(Clock::now());
    if (!counters_.fatal) Exchange(0ms);
  }

 private:
  Answer Post(const std::string& path, const json& body, std::chrono::milliseconds timeout) {
    client_.set_read_timeout(timeout);
    const httplib::Headers headers = {
        {"Authorization", "Bearer " + options_.token},
        {wire::kProtocolHeader, wire::ToString(wire::kProtocolVersion)}};
    httplib::Result result = client_.Post(path.c_str(), headers, body.dump(), "application/json");
    Answer answer;
    if (!result) {
      answer.error = httplib::to_string(result.error());
      return answer;
    }
    answer.status = result->status;
    answer.body = json::parse(result->body, nullptr, /*allow_exceptions=*/false);
    if (answer.status != 200) answer.error = result->body.substr(0, 300);
    return answer;
  }

  void RegisterHosts(const std::atomic<bool>& stop) {
    for (VirtualHost& host : hosts_) {
      if (host.registered() || stop) continue;
      const TimePoint sent = Clock::now();
      Answer answer =
          Post("/v1/agents/register", wire::EncodeRegister(host.Registration(options_.slots)), 5s);
      if (answer.status == 401 || answer.status == 403) {
        spdlog::error("virtual agent: the controller refused the agent token: {}", answer.error);
        counters_.fatal = true;
        return;
      }
      if (answer.status != 200) {
        if (answer.error != last_error_) {
          spdlog::warn("virtual host {}: registration: {}", host.name(), answer.error);
          last_error_ = answer.error;
        }
        return;  // the next turn tries again
      }
      Result<wire::RegisterReply> reply = wire::DecodeRegisterReply(answer.body);
      if (reply && host.OnRegistered(*reply, sent)) {
        heartbeat_ = std::chrono::milliseconds(reply->heartbeat_ms);
        read_slack_ = std::max<std::chrono::milliseconds>(
            10s, std::chrono::seconds(reply->lease_seconds) / 2);
        ++counters_.registered;
      }
    }
  }

  // How long the next long poll may wait: 0 when a host has news, else until the shard's
  // next timer, at most the controller's heartbeat. Waits out min_gap first.
  std::chrono::milliseconds WaitFor(TimePoint now) {
    const auto since = now - last_exchange_;
    if (since < options_.min_gap) {
      std::this_thread::sleep_for(options_.min_gap - since);
      now = Clock::now();
      for (VirtualHost& host : hosts_) host.Tick(now);
    }
    auto wait = heartbeat_;
    for (const VirtualHost& host : hosts_) {
      if (!host.registered()) continue;
      if (host.HasNews()) return 0ms;
      if (auto next = host.NextTimer(); next) {
        wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(
                                  std::max(*next - now, Clock::duration(0))));
      }
    }
    return wait;
  }

  // One batched heartbeat of every registered host: a full heartbeat for a host with news or
  // whose last full one is older than kFullEvery, a poll for the others. False when the
  // controller did not answer.
  bool Exchange(std::chrono::milliseconds wait) {
    wire::BatchHeartbeatRequest request{
        .wait_ms = wait.count(), .instance = instance_, .compact = true};
    std::vector<std::pair<VirtualHost*, uint64_t>> full;
    std::vector<std::pair<VirtualHost*, uint64_t>> polls;
    const TimePoint sent = Clock::now();
    last_full_.resize(hosts_.size());
    for (size_t i = 0; i < hosts_.size(); ++i) {
      VirtualHost& host = hosts_[i];
      if (!host.registered()) continue;
      if (host.HasNews() || sent - last_full_[i] >= kFullEvery) {
        last_full_[i] = sent;
        uint64_t seq = 0;
        request.hosts.emplace_back(host.name(), host.Heartbeat(seq));
        full.emplace_back(&host, seq);
      } else {
        request.poll.push_back(host.name());
        polls.emplace_back(&host, host.Poll());
      }
    }
    if (full.empty() && polls.empty()) return true;
    last_exchange_ = sent;
    // A busy controller may answer late: the request is given up after half the lease (at
    // least 10 s), and the hosts' leases run out (they fence) only if no answer came at all.
    Answer answer =
        Post("/v1/agents/heartbeats", wire::EncodeBatchHeartbeat(request), wait + read_slack_);
    if (answer.status != 200) {
      for (auto& [host, seq] : full) host->KeepNews();  // said again next time
      if (answer.error != last_error_) {
        spdlog::warn("virtual agent: heartbeats: {}", answer.error);
        last_error_ = answer.error;
      }
      return false;
    }
    Result<wire::BatchHeartbeatReply> reply = wire::DecodeBatchHeartbeatReply(answer.body);
    if (!reply) {
      spdlog::error("virtual agent: bad heartbeats response: {}", reply.error().message());
      return false;
    }
    ++counters_.exchanges;
    full.insert(full.end(), polls.begin(), polls.end());  // the reply's order
    Apply(*reply, full, sent);
    return true;
  }

  // Each sent host's answer; a host the compact reply leaves out had an empty answer at the
  // batch's epoch (its lease renewed).
  void Apply(const wire::BatchHeartbeatReply& reply,
             const std::vector<std::pair<VirtualHost*, uint64_t>>& sent_hosts, TimePoint sent) {
    const TimePoint now = Clock::now();
    std::vector<std::string_view> names;
    names.reserve(sent_hosts.size());
    for (const auto& [host, seq] : sent_hosts) names.push_back(host->name());
    const std::vector<const wire::BatchHostReply*> matched = wire::MatchBatchReply(reply, names);
    const wire::HeartbeatReply empty{.epoch = reply.epoch};
    for (size_t i = 0; i < sent_hosts.size(); ++i) {
      VirtualHost& host = *sent_hosts[i].first;
      const wire::BatchHostReply* entry = matched[i];
      if (entry == nullptr) {
        host.OnReply(empty, sent_hosts[i].second, sent, now);
      } else if (entry->status == 200) {
        host.OnReply(entry->reply, sent_hosts[i].second, sent, now);
      } else if (entry->status == 404 || entry->status == 409) {
        host.OnRefused();
      }
    }
  }

  const VirtualAgentOptions& options_;
  Counters& counters_;
  httplib::Client client_;
  const std::string instance_ = InstanceId();
  // Running jobs said again this often (a safety net: every change is news at once); at
  // 10,000 hosts a 2 s repeat was 80,000 job ids a second for both sides to encode and read.
  static constexpr auto kFullEvery = std::chrono::seconds(10);
  std::vector<VirtualHost> hosts_;
  std::vector<TimePoint> last_full_;  // per host: when its last full heartbeat went
  std::chrono::milliseconds heartbeat_{500};
  std::chrono::milliseconds read_slack_{10'000};
  TimePoint last_exchange_{};
  std::string last_error_;
};

}  // namespace

int RunVirtualAgent(const VirtualAgentOptions& options, const std::atomic<bool>& stop) {
  if (options.hosts.empty() || options.connections < 1 || options.token.empty()) {
    spdlog::error("virtual agent: needs hosts, a token and at least one connection");
    return 2;
  }
  Result<std::vector<std::string>> urls = wire::ParseServerList(options.server);
  const std::string url = urls && !urls->empty() ? urls->front() : options.server;
  Counters counters;
  const size_t shards = std::min<size_t>(options.connections, options.hosts.size());
  std::vector<std::unique_ptr<Shard>> parts;
  for (size_t i = 0; i < shards; ++i) {
    parts.push_back(std::make_unique<Shard>(options, counters, url));
  }
  for (size_t i = 0; i < options.hosts.size(); ++i) {
    parts[i * shards / options.hosts.size()]->Add(options.hosts[i]);
  }
  spdlog::info("virtual agent: {} hosts over {} connections to {}", options.hosts.size(), shards,
               url);
  std::vector<std::thread> threads;
  for (auto& part : parts) threads.emplace_back([&part, &stop] { part->Run(stop); });
  auto last_stats = Clock::now();
  while (!stop && !counters.fatal) {
    std::this_thread::sleep_for(50ms);
    if (options.stats_every.count() > 0 && Clock::now() - last_stats >= options.stats_every) {
      last_stats = Clock::now();
      spdlog::info("virtual agent: {} registered, {} heartbeat exchanges",
                   counters.registered.load(), counters.exchanges.load());
    }
  }
  for (std::thread& thread : threads) thread.join();
  return counters.fatal ? 1 : 0;
}

}  // namespace sluice::agent
