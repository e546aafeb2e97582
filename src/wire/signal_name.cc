#include "wire/signal_name.h"

#include <signal.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace sluice::wire {
namespace {

struct Named {
  std::string_view name;
  int number;
};

// What a job may be sent: the POSIX signals a batch job handles or is stopped by. Not the
// ones only a fault raises (SEGV, BUS, ILL, FPE), nor CHLD.
constexpr std::array<Named, 19> kSignals{{
    {"HUP", SIGHUP},   {"INT", SIGINT},       {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
    {"KILL", SIGKILL}, {"USR1", SIGUSR1},     {"USR2", SIGUSR2}, {"PIPE", SIGPIPE},
    {"ALRM", SIGALRM}, {"TERM", SIGTERM},     {"CONT", SIGCONT}, {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},     {"TTOU", SIGTTOU}, {"URG", SIGURG},
    {"XCPU", SIGXCPU}, {"VTALRM", SIGVTALRM}, {"WINCH", SIGWINCH},
}};

const Named* ByName(std::string_view name) {
  auto it = std::find_if(kSignals.begin(), kSignals.end(),
                         [&](const Named& s) { return s.name == name; });
  return it == kSignals.end() ? nullptr : &*it;
}

}  // namespace

std::string SignalNames() {
  std::string out;
  for (const Named& s : kSignals) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

Result<std::string> CanonicalSignal(std::string_view text) {
  std::string name;
  for (char c : text) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.starts_with("SIG")) name.erase(0, 3);
  int number = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), number);
  if (!name.empty() && error == std::errc() && end == name.data() + name.size()) {
    for (const Named& s : kSignals) {
      if (s.number == number) return std::string(s.name);
    }
  } else if (ByName(name) != nullptr) {
    return name;
  }
  return InvalidArgument("signal: '" + std::string(text) + "' is not a signal a job may be sent (" +
                         SignalNames() + ", with or without SIG, or their numbers)");
}

Result<std::string> CanonicalSignalName(std::string_view text) {
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front()))) {
    return InvalidArgument("signal: '" + std::string(text) + "': give a signal's name (" +
                           SignalNames() + "), not a number");
  }
  return CanonicalSignal(text);
}

std::optional<int> SignalNumber(std::string_view name) {
  const Named* s = ByName(name);
  return s == nullptr ? std::nullopt : std::optional<int>(s->number);
}

}  // namespace sluice::wire
