#include "agent/health_check.h"

#include <chrono>
#include <string_view>
#include <utility>

namespace sluice::agent {
namespace {

using Clock = std::chrono::steady_clock;

// What a health program may print (NHC prints a few lines); more is a failure.
constexpr size_t kMaxHealthOutputBytes = 64 * 1024;

std::string_view TrimRight(std::string_view line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  return line;
}

// The first line of `text` starting with "ERROR"; empty: none.
std::string_view FirstErrorLine(std::string_view text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (line.starts_with("ERROR")) return TrimRight(line);
    start = end + 1;
  }
  return {};
}

// The last line of `text` with something on it; empty: none.
std::string_view LastLine(std::string_view text) {
  while (!text.empty()) {
    const size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string_view::npos) return {};
    text = text.substr(0, end + 1);
    const size_t start = text.find_last_of('\n');
    return start == std::string_view::npos ? text : text.substr(start + 1);
  }
  return {};
}

wire::HealthReport Failed(std::string_view message) {
  return wire::HealthReport{.ok = false, .message = wire::ClipHealthMessage(message)};
}

}  // namespace

std::vector<std::string> HealthEnvironment(const std::string& host) {
  return {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/", "LC_ALL=C",
          "SLUICE_HOST=" + host};
}

wire::HealthReport JudgeHealthRun(const Result<CommandRun>& run, const core::HealthCheck& check) {
  if (!run) return Failed(run.error().message());
  const CommandOutput& output = run->output;
  for (const std::string* stream : {&output.out, &output.err}) {
    if (std::string_view line = FirstErrorLine(*stream); !line.empty()) return Failed(line);
  }
  if (run->timed_out) return Failed("timed out after " + std::to_string(check.timeout) + " s");
  if (run->too_much_output) {
    return Failed("printed more than " + std::to_string(kMaxHealthOutputBytes) + " bytes");
  }
  if (!run->signal && output.exit_code == 0) return wire::HealthReport{};
  for (const std::string* stream : {&output.err, &output.out}) {
    if (std::string_view line = LastLine(*stream); !line.empty()) return Failed(line);
  }
  if (run->signal) return Failed("killed by signal " + std::to_string(*run->signal));
  return Failed("exit " + std::to_string(output.exit_code));
}

wire::HealthReport RunHealthCheck(const core::HealthCheck& check, const std::string& host) {
  const CommandLimits limits{.timeout = std::chrono::seconds(check.timeout),
                             .max_bytes = kMaxHealthOutputBytes,
                             .environment = HealthEnvironment(host)};
  return JudgeHealthRun(RunCommandToEnd({check.program}, limits), check);
}

HealthChecker::HealthChecker(std::string host, OnChange on_change)
    : host_(std::move(host)), on_change_(std::move(on_change)), thread_([this] { Loop(); }) {}

HealthChecker::~HealthChecker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void HealthChecker::Configure(const std::optional<core::HealthCheck>& check) {
  {
    std::lock_guard lock(mu_);
    if (check == check_) return;
    check_ = check;
    ++generation_;
    last_.reset();
  }
  wake_.notify_all();
}

std::optional<wire::HealthReport> HealthChecker::Last() const {
  std::lock_guard lock(mu_);
  return last_;
}

// Steps: 1. wait for a check and its next run time (or a change, or stop); 2. run it without
// the lock; 3. keep the result unless the check changed meanwhile, and call on_change when it
// differs from the last one.
void HealthChecker::Loop() {
  std::unique_lock lock(mu_);
  uint64_t ran_generation = 0;  // the generation the next run time belongs to
  Clock::time_point next_run = Clock::now();
  while (!stop_) {
    if (!check_) {
      wake_.wait(lock, [&] { return stop_ || check_.has_value(); });
      continue;
    }
    if (ran_generation == generation_ && Clock::now() < next_run) {
      const uint64_t generation = generation_;
      wake_.wait_until(lock, next_run, [&] { return stop_ || generation_ != generation; });
      continue;
    }
    const core::HealthCheck check = *check_;
    const uint64_t generation = generation_;
    const Clock::time_point started = Clock::now();
    lock.unlock();
    wire::HealthReport report = RunHealthCheck(check, host_);
    lock.lock();
    ran_generation = generation;
    next_run = started + std::chrono::seconds(check.interval);
    if (generation != generation_) continue;  // changed meanwhile: the new one runs at once
    if (last_ == report) continue;
    last_ = report;
    lock.unlock();
    on_change_(report);
    lock.lock();
  }
}

}  // namespace sluice::agent
