#include "server/step_broker.h"

#include <algorithm>

namespace sluice::server {
namespace {

constexpr size_t kMaxPageBytes = 1 << 20;

size_t DataBytes(const wire::StepFrame& frame) { return frame.data.size() + 16; }

std::string StepName(int64_t job, int64_t step) { return "step " + wire::StepId(job, step); }

}  // namespace

Status StepBroker::Open(const wire::StepOrder& order, const std::string& host, int64_t now_ms) {
  MutexLock lock(mu_);
  if (steps_.size() >= options_.max_steps) {
    return Status(StatusCode::kResourceExhausted,
                  "the controller runs " + std::to_string(steps_.size()) +
                      " steps, its limit; try again later");
  }
  auto [it, inserted] = steps_.try_emplace(Key{order.job, order.step});
  if (!inserted) {
    return Status(StatusCode::kAlreadyExists, StepName(order.job, order.step) + " exists");
  }
  it->second.host = host;
  it->second.client_seen_ms = now_ms;
  orders_[host].push_back(order);
  return Status::Ok();
}

void StepBroker::OpenAttached(int64_t job, const std::string& host, int64_t now_ms) {
  MutexLock lock(mu_);
  auto it = steps_.find(Key{job, 0});
  if (it != steps_.end() && !it->second.ended && !it->second.killed) return;  // a relaunch
  Step& step = steps_[Key{job, 0}];
  step = Step{};
  step.host = host;
  step.client_seen_ms = now_ms;
  changed_.notify_all();
}

bool StepBroker::HasOrders(const std::string& host) {
  MutexLock lock(mu_);
  return orders_.contains(host) || kills_.contains(host);
}

std::vector<wire::StepOrder> StepBroker::TakeOrders(const std::string& host) {
  MutexLock lock(mu_);
  auto it = orders_.find(host);
  if (it == orders_.end()) return {};
  std::vector<wire::StepOrder> out = std::move(it->second);
  orders_.erase(it);
  return out;
}

std::vector<wire::StepKill> StepBroker::TakeKills(const std::string& host) {
  MutexLock lock(mu_);
  auto it = kills_.find(host);
  if (it == kills_.end()) return {};
  std::vector<wire::StepKill> out = std::move(it->second);
  kills_.erase(it);
  return out;
}

void StepBroker::QueueKill(const std::string& host, wire::StepKill kill) {
  std::vector<wire::StepKill>& list = kills_[host];
  if (std::none_of(list.begin(), list.end(), [&](const wire::StepKill& k) {
        return k.job == kill.job && (k.step == 0 || k.step == kill.step);
      })) {
    list.push_back(kill);
  }
}

std::set<std::string> StepBroker::KillJob(int64_t job) {
  MutexLock lock(mu_);
  std::set<std::string> hosts;
  for (auto it = steps_.lower_bound(Key{job, 0}); it != steps_.end() && it->first.first == job;
       ++it) {
    Step& step = it->second;
    if (step.ended || step.killed) continue;
    step.killed = true;
    QueueKill(step.host, wire::StepKill{.job = job, .step = 0});
    hosts.insert(step.host);
  }
  // Orders not yet taken are dropped: a step of an ended job never starts.
  for (auto& [host, orders] : orders_) {
    std::erase_if(orders, [&](const wire::StepOrder& o) { return o.job == job; });
  }
  std::erase_if(orders_, [](const auto& entry) { return entry.second.empty(); });
  changed_.notify_all();
  return hosts;
}

std::set<std::string> StepBroker::Expire(int64_t now_ms) {
  MutexLock lock(mu_);
  std::set<std::string> hosts;
  const int64_t grace = options_.client_grace.count();
  for (auto it = steps_.begin(); it != steps_.end();) {
    Step& step = it->second;
    if (step.ended || step.killed) {
      if (step.ended_ms == 0) step.ended_ms = now_ms;
      if ((step.ended && step.exit_read) || now_ms - step.ended_ms > grace) {
        it = steps_.erase(it);
        continue;
      }
    } else if (step.client_polls == 0 && now_ms - step.client_seen_ms > grace) {
      step.killed = true;
      QueueKill(step.host, wire::StepKill{.job = it->first.first, .step = it->first.second});
      hosts.insert(step.host);
    }
    ++it;
  }
  if (!hosts.empty()) changed_.notify_all();
  return hosts;
}

void StepBroker::FailHost(const std::string& host, const std::string& why) {
  MutexLock lock(mu_);
  for (auto& [key, step] : steps_) {
    if (step.host != host || step.ended) continue;
    wire::StepFrame exit{.kind = wire::FrameKind::kExit};
    exit.exit = wire::StepExit{.status = 255, .error = why};
    step.ended = true;
    step.output.bytes += DataBytes(exit);
    step.output.frames.push_back(std::move(exit));
  }
  kills_.erase(host);
  orders_.erase(host);
  changed_.notify_all();
}

Result<StepBroker::Step*> StepBroker::Find(const Key& key) {
  auto it = steps_.find(key);
  if (it == steps_.end()) {
    return Status(StatusCode::kNotFound, "no " + StepName(key.first, key.second) +
                                             " (it never existed, or ended and was read)");
  }
  return &it->second;
}

wire::StepPage StepBroker::PageAfter(Sequence& seq, int64_t after, bool end) {
  while (!seq.frames.empty() && seq.first <= after) {
    seq.bytes -= DataBytes(seq.frames.front());
    seq.frames.pop_front();
    ++seq.first;
  }
  wire::StepPage page;
  size_t bytes = 0;
  for (const wire::StepFrame& frame : seq.frames) {
    if (!page.frames.empty() && bytes + DataBytes(frame) > kMaxPageBytes) break;
    bytes += DataBytes(frame);
    page.frames.push_back(frame);
  }
  page.next = seq.first - 1 + static_cast<int64_t>(page.frames.size());
  if (page.frames.empty()) page.next = std::max<int64_t>(after, seq.first - 1);
  page.end = end && page.next == seq.Next() - 1;
  return page;
}

Result<wire::StepPage> StepBroker::ReadOutput(int64_t job, int64_t step_no, int64_t after,
                                              std::chrono::milliseconds wait, int64_t now_ms) {
  MutexLock lock(mu_);
  const Key key{job, step_no};
  Result<Step*> found = Find(key);
  if (!found) return found.error();
  Step* step = *found;
  ++step->client_polls;
  step->client_seen_ms = now_ms;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  changed_.wait_until(lock, deadline, [&] {
    auto it = steps_.find(key);
    return stopping_ || it == steps_.end() || it->second.output.Next() - 1 > after;
  });
  found = Find(key);  // it may have been forgotten meanwhile
  if (!found) return found.error();
  step = *found;
  --step->client_polls;
  wire::StepPage page = PageAfter(step->output, after, step->ended);
  if (page.end) step->exit_read = true;
  return page;
}

Status StepBroker::WriteInput(int64_t job, int64_t step_no, std::vector<wire::StepFrame> frames) {
  MutexLock lock(mu_);
  Result<Step*> found = Find(Key{job, step_no});
  if (!found) return found.error();
  Step& step = **found;
  if (step.ended || step.killed) {
    return FailedPrecondition(StepName(job, step_no) + " has ended");
  }
  size_t bytes = 0;
  for (const wire::StepFrame& frame : frames) bytes += DataBytes(frame);
  if (!step.input.frames.empty() && step.input.bytes + bytes > options_.max_input_bytes) {
    return Status(StatusCode::kResourceExhausted,
                  StepName(job, step_no) + ": its input is not read yet; send it again");
  }
  for (wire::StepFrame& frame : frames) {
    step.input.bytes += DataBytes(frame);
    step.input.frames.push_back(std::move(frame));
  }
  changed_.notify_all();
  return Status::Ok();
}

Result<wire::StepPage> StepBroker::ReadInput(const std::string& host, int64_t job,
                                             int64_t step_no, int64_t after,
                                             std::chrono::milliseconds wait) {
  MutexLock lock(mu_);
  const Key key{job, step_no};
  Result<Step*> found = Find(key);
  if (!found) return found.error();
  if ((*found)->host != host) {
    return Status(StatusCode::kPermissionDenied,
                  StepName(job, step_no) + " does not run on host " + host);
  }
  const auto deadline = std::chrono::steady_clock::now() + wait;
  changed_.wait_until(lock, deadline, [&] {
    auto it = steps_.find(key);
    return stopping_ || it == steps_.end() || it->second.input.Next() - 1 > after ||
           it->second.ended || it->second.killed;
  });
  found = Find(key);
  if (!found) return found.error();
  Step& step = **found;
  return PageAfter(step.input, after, step.ended || step.killed);
}

Result<bool> StepBroker::WriteOutput(const std::string& host, int64_t job, int64_t step_no,
                                     std::vector<wire::StepFrame> frames,
                                     std::optional<StepEnd>& ended) {
  MutexLock lock(mu_);
  Result<Step*> found = Find(Key{job, step_no});
  if (!found) return found.error();
  Step& step = **found;
  if (step.host != host) {
    return Status(StatusCode::kPermissionDenied,
                  StepName(job, step_no) + " does not run on host " + host);
  }
  if (step.ended) return true;  // a repeat of the last write
  size_t bytes = 0;
  for (const wire::StepFrame& frame : frames) bytes += DataBytes(frame);
  if (!step.output.frames.empty() && step.output.bytes + bytes > options_.max_output_bytes) {
    return false;
  }
  for (wire::StepFrame& frame : frames) {
    if (step.ended) break;  // nothing after the exit
    if (frame.kind == wire::FrameKind::kExit) {
      step.ended = true;
      ended = StepEnd{.job = job, .step = step_no, .exit = frame.exit, .killed = step.killed};
    } else if (frame.kind != wire::FrameKind::kStdout && frame.kind != wire::FrameKind::kStderr) {
      continue;  // input kinds do not flow this way
    }
    step.output.bytes += DataBytes(frame);
    step.output.frames.push_back(std::move(frame));
  }
  changed_.notify_all();
  return true;
}

void StepBroker::WakeAll() {
  MutexLock lock(mu_);
  stopping_ = true;
  changed_.notify_all();
}

size_t StepBroker::size() {
  MutexLock lock(mu_);
  return steps_.size();
}

}  // namespace sluice::server
