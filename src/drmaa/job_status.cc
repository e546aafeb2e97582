#include "drmaa/job_status.h"

#include <signal.h>

#include <cstdio>
#include <optional>

#include "client/wait_exit.h"
#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

using nlohmann::json;

constexpr int kExitCodeMask = 0xff;
constexpr int kSignalShift = 8;
constexpr int kExitedBit = 1 << 16;
constexpr int kSignalledBit = 1 << 17;
constexpr int kAbortedBit = 1 << 18;
constexpr int kCoreDumpedBit = 1 << 19;

// A member of a job object, or nothing when absent, null or of another type: the controller's
// answer is read defensively (nlohmann's accessors throw on a type mismatch).
std::string Text(const json& job, const char* key) {
  if (!job.is_object()) return "";
  auto it = job.find(key);
  return it != job.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<int64_t> Integer(const json& job, const char* key) {
  if (!job.is_object()) return std::nullopt;
  auto it = job.find(key);
  if (it == job.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::optional<double> Number(const json& job, const char* key) {
  if (!job.is_object()) return std::nullopt;
  auto it = job.find(key);
  if (it == job.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

bool Started(const json& job) { return Integer(job, "start_time").has_value(); }

Termination Signalled(const json& job) {
  const std::optional<int64_t> code = Integer(job, "exit_code");
  const bool by_signal = code && *code > 128 && *code < 128 + 65;
  return Termination{.signalled = true,
                     .signal = by_signal ? static_cast<int>(*code - 128) : SIGKILL};
}

std::string Decimal(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

std::string HostsText(const json& job) {
  auto it = job.find("hosts");
  if (it == job.end() || !it->is_array()) return "";
  std::string text;
  for (const json& host : *it) {
    const std::string name = Text(host, "name");
    const std::optional<int64_t> slots = Integer(host, "slots");
    if (name.empty()) continue;
    text += (text.empty() ? "" : ",") + name + (slots ? ":" + std::to_string(*slots) : "");
  }
  return text;
}

}  // namespace

int ProgramStateOf(const json& job) {
  const std::string state = Text(job, "state");
  if (state == "PENDING" || state == "ADMITTING") return DRMAA_PS_QUEUED_ACTIVE;
  if (state == "HELD") return DRMAA_PS_USER_ON_HOLD;
  if (state == "RUNNING") return DRMAA_PS_RUNNING;
  if (state == "DONE") return DRMAA_PS_DONE;
  if (state == "EXIT" || state == "CANCELLED") return DRMAA_PS_FAILED;
  return DRMAA_PS_UNDETERMINED;
}

bool HasEnded(const json& job) { return client::IsEndState(Text(job, "state")); }

bool KillReported(const json& job) {
  if (Text(job, "state") != "CANCELLED" || job.contains("array")) return true;
  return !Started(job) || Integer(job, "exit_code").has_value();
}

Termination TerminationOf(const json& job) {
  const std::string state = Text(job, "state");
  const std::string cause = Text(job, "cause");
  const std::optional<int64_t> code = Integer(job, "exit_code");
  if (state == "DONE") return Termination{.exited = true, .exit_code = 0};
  if (state == "CANCELLED") {
    if (!Started(job)) return Termination{.aborted = true};
    // Ended by itself as the cancel came: an exit code below 129 is its own.
    if (code && *code <= 128) {
      return Termination{.exited = true, .exit_code = static_cast<int>(*code)};
    }
    return Signalled(job);
  }
  if (cause == "RUN_LIMIT" || cause == "MEM_LIMIT") return Signalled(job);
  if (cause == "UNSCHEDULABLE" || cause == "DISPATCH_FAILED" || !Started(job)) {
    return Termination{.aborted = true};
  }
  if (cause == "HOST_LOST") return Signalled(job);
  return Termination{.exited = true,
                     .exit_code = code ? static_cast<int>(*code & kExitCodeMask) : 1};
}

std::vector<std::string> ResourceUsageOf(const json& job) {
  std::vector<std::string> usage;
  const std::optional<int64_t> submit = Integer(job, "submit_time");
  const std::optional<int64_t> start = Integer(job, "start_time");
  const std::optional<int64_t> end = Integer(job, "end_time");
  if (submit) usage.push_back("submission_time=" + std::to_string(*submit));
  if (start) usage.push_back("start_time=" + std::to_string(*start));
  if (end) usage.push_back("end_time=" + std::to_string(*end));
  if (start && end) usage.push_back("wallclock=" + std::to_string(*end - *start));
  if (std::optional<double> cpu = Number(job, "cpu_seconds")) usage.push_back("cpu=" + Decimal(*cpu));
  if (std::optional<double> rss = Number(job, "max_rss_mb")) {
    usage.push_back("max_rss_mb=" + Decimal(*rss));
  }
  if (const std::string hosts = HostsText(job); !hosts.empty()) usage.push_back("hosts=" + hosts);
  if (std::optional<int64_t> code = Integer(job, "exit_code")) {
    usage.push_back("exit_code=" + std::to_string(*code));
  }
  return usage;
}

int EncodeStat(const Termination& t) {
  int stat = 0;
  if (t.exited) stat |= kExitedBit | (t.exit_code & kExitCodeMask);
  if (t.signalled) stat |= kSignalledBit | ((t.signal & 0xff) << kSignalShift);
  if (t.aborted) stat |= kAbortedBit;
  if (t.core_dumped) stat |= kCoreDumpedBit;
  return stat;
}

Termination DecodeStat(int stat) {
  return Termination{.exited = (stat & kExitedBit) != 0,
                     .exit_code = stat & kExitCodeMask,
                     .signalled = (stat & kSignalledBit) != 0,
                     .signal = (stat >> kSignalShift) & 0xff,
                     .aborted = (stat & kAbortedBit) != 0,
                     .core_dumped = (stat & kCoreDumpedBit) != 0};
}

std::string SignalName(int signal) {
  switch (signal) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    default:
      return "SIG" + std::to_string(signal);
  }
}

}  // namespace sluice::drmaa
