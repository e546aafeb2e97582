#include "agent/virtual_host.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;

// Seconds as a duration; nullopt unless a finite number >= 0 (an `s` suffix is allowed, as
// sleep(1) takes it).
std::optional<std::chrono::milliseconds> ParseSeconds(std::string text) {
  if (!text.empty() && text.back() == 's') text.pop_back();
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(seconds) || seconds < 0 ||
      seconds > 1e9) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

// N of `sleep N` or `exec sleep N` (the whole command, nothing after it).
std::optional<std::chrono::milliseconds> SleepOf(const std::vector<std::string>& words) {
  size_t i = !words.empty() && words[0] == "exec" ? 1 : 0;
  if (words.size() != i + 2) return std::nullopt;
  const std::string& program = words[i];
  if (program != "sleep" && !(program.size() > 6 && program.ends_with("/sleep"))) {
    return std::nullopt;
  }
  return ParseSeconds(words[i + 1]);
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace

VirtualRun VirtualRunOf(const wire::Launch& launch) {
  VirtualRun run;
  if (auto it = launch.env.find("SLUICE_VIRTUAL_RUNTIME"); it != launch.env.end()) {
    run.runtime = ParseSeconds(it->second).value_or(0ms);
  } else if (auto sleep = SleepOf(launch.argv); sleep) {
    run.runtime = *sleep;
  } else if (auto text = SleepOf(Words(launch.command)); text) {
    run.runtime = *text;
  }
  if (auto it = launch.env.find("SLUICE_VIRTUAL_EXIT"); it != launch.env.end()) {
    char* end = nullptr;
    const long code = std::strtol(it->second.c_str(), &end, 10);
    const bool whole = !it->second.empty() && end == it->second.c_str() + it->second.size();
    run.exit_code = whole && code >= 0 && code <= 255 ? static_cast<int>(code) : 255;
  }
  return run;
}

wire::RegisterRequest VirtualHost::Registration(int slots) const {
  wire::RegisterRequest request{.epoch = highest_epoch_, .instance = instance_};
  request.host.name = name_;
  request.host.slots = slots;
  for (const auto& [job, run] : jobs_) request.running.insert(job);
  return request;
}

bool VirtualHost::OnRegistered(const wire::RegisterReply& reply, TimePoint sent) {
  if (reply.epoch < highest_epoch_) return false;
  highest_epoch_ = reply.epoch;
  lease_ = std::chrono::seconds(reply.lease_seconds);
  registered_ = true;
  news_ = true;  // the first heartbeat follows at once (it resolves unlisted jobs)
  if (!last_ok_send_ || sent > *last_ok_send_) last_ok_send_ = sent;
  fenced_ = false;
  return true;
}

void VirtualHost::End(int64_t job, wire::ExitReport report) {
  if (auto it = jobs_.find(job); it != jobs_.end()) report.run = it->second.launch_run;
  jobs_.erase(job);
  exits_[job] = std::move(report);
  ++ended_;
  RecomputeNextEnd();
}

void VirtualHost::RecomputeNextEnd() {
  next_end_.reset();
  for (const auto& [id, run] : jobs_) {
    if (!next_end_ || run.end < *next_end_) next_end_ = run.end;
  }
}

void VirtualHost::Limit(int64_t id, Job& job, std::optional<std::chrono::milliseconds> run_limit) {
  job.end = job.started + job.run.runtime;
  job.exit = {.job = id, .exit_code = job.run.exit_code, .cpu_seconds = 0.0, .max_rss_mb = 0.0};
  if (run_limit && *run_limit < job.run.runtime) {
    job.end = job.started + *run_limit;
    job.exit = {.job = id, .exit_code = 143, .signal = 15, .cause = wire::ExitCause::kRunLimit};
  }
}

void VirtualHost::Tick(TimePoint now) {
  while (next_end_ && *next_end_ <= now) {
    auto due = std::find_if(jobs_.begin(), jobs_.end(),
                            [&](const auto& entry) { return entry.second.end <= now; });
    if (due == jobs_.end()) break;
    End(due->first, due->second.exit);
  }
  if (last_ok_send_ && !fenced_ && now - *last_ok_send_ >= lease_) {
    fenced_ = true;  // as the real agent: cut off for the lease, every job is killed
    while (!jobs_.empty()) {
      End(jobs_.begin()->first, {.job = jobs_.begin()->first,
                                 .exit_code = 137,
                                 .signal = 9,
                                 .cause = wire::ExitCause::kKilled});
    }
  }
}

wire::HeartbeatRequest VirtualHost::Heartbeat(uint64_t& seq) {
  wire::HeartbeatRequest request{.epoch = highest_epoch_, .instance = instance_};
  for (const auto& [job, run] : jobs_) request.running.insert(job);
  for (const auto& [job, exit] : exits_) request.exited.push_back(exit);
  for (const auto& [job, failure] : failures_) request.launch_failed.push_back(failure);
  news_ = false;
  seq = next_seq_++;
  return request;
}

void VirtualHost::Launch(const wire::Launch& launch, uint64_t seq, TimePoint now) {
  if (jobs_.contains(launch.job) || exits_.contains(launch.job) || failures_.contains(launch.job)) {
    return;
  }
  if (auto acked = acked_at_seq_.find(launch.job);
      acked != acked_at_seq_.end() && seq <= acked->second) {
    return;  // a repeat of a launch whose end is acknowledged: never run twice
  }
  news_ = true;
  if (launch.account.empty()) {
    failures_[launch.job] = {.job = launch.job,
                             .message = "the launch names no account to run the job as"};
    return;
  }
  Job job{.end = now,
          .exit = {},
          .started = now,
          .run = VirtualRunOf(launch),
          .launch_run = launch.run};
  Limit(launch.job, job, launch.run_limit);
  if (!next_end_ || job.end < *next_end_) next_end_ = job.end;
  jobs_.emplace(launch.job, std::move(job));
  ++started_;
}

bool VirtualHost::OnReply(const wire::HeartbeatReply& reply, uint64_t seq, TimePoint sent,
                          TimePoint now) {
  if (reply.epoch < highest_epoch_) return false;  // fencing: a stale controller
  highest_epoch_ = reply.epoch;
  if (!last_ok_send_ || sent > *last_ok_send_) last_ok_send_ = sent;
  fenced_ = false;
  for (int64_t job : reply.ack) {
    if (exits_.erase(job) + failures_.erase(job) > 0) acked_at_seq_[job] = next_seq_ - 1;
  }
  for (const wire::Launch& launch : reply.launch) Launch(launch, seq, now);
  for (const wire::RunLimitOrder& order : reply.run_limits) {
    auto job = jobs_.find(order.job);
    if (job == jobs_.end()) continue;  // ended meanwhile: its end is already news
    std::optional<std::chrono::milliseconds> limit;
    if (order.run_limit_seconds) limit = std::chrono::seconds(*order.run_limit_seconds);
    Limit(order.job, job->second, limit);
    RecomputeNextEnd();
  }
  for (const wire::KillOrder& order : reply.kill) {
    if (jobs_.contains(order.job)) {
      End(order.job,
          {.job = order.job, .exit_code = 143, .signal = 15, .cause = wire::ExitCause::kKilled});
    }
  }
  return true;
}

std::optional<TimePoint> VirtualHost::NextTimer() const {
  std::optional<TimePoint> next = next_end_;
  if (last_ok_send_ && !fenced_) {
    const TimePoint lease_end = *last_ok_send_ + lease_;
    if (!next || lease_end < *next) next = lease_end;
  }
  return next;
}

void VirtualHost::KillAll(TimePoint) {
  while (!jobs_.empty()) {
    End(jobs_.begin()->first, {.job = jobs_.begin()->first,
                               .exit_code = 143,
                               .signal = 15,
                               .cause = wire::ExitCause::kKilled});
  }
}

}  // namespace sluice::agent
