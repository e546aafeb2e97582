// What others see of this process's image: its argv area (/proc/PID/cmdline, readable by every
// user of the machine) and its initial environment block (/proc/PID/environ). Kept so that
// (1) secrets given on the command line or in the environment can be overwritten once read
// (issue 48: a job read the agent token from /proc/$PPID/cmdline, or inherited SLUICE_TOKEN),
// and (2) a forked child that never execs — the job shepherd (job_shepherd.h) — shows an argv
// of its own instead of the agent's.
//
// Representation: the first and one-past-the-last byte of the contiguous block the kernel laid
// argv's strings in at exec, recorded once by RememberArgvArea (main, before anything else).
// Thread-safety: RememberArgvArea once, before threads start; ConcealInArgv and
// TakeFromEnvironment before threads too;
// SetProcessTitle only in a freshly forked child (async-signal-safe: no allocation, no locks).
#pragma once

#include <string>
#include <string_view>

namespace sluice::agent {

void RememberArgvArea(int argc, char** argv);

// Overwrites `value` wherever it occurs in the argv area with 'x' bytes of the same length
// (the words keep their places, so `ps` still shows which flags were given). REQUIRES: the
// value was already copied by whoever needs it.
void ConcealInArgv(std::string_view value);

// The value of environment variable `name` (empty when unset), then removed from the
// environment and overwritten with 'x' bytes where the kernel's initial block holds it, so
// neither a forked child nor /proc/PID/environ sees it. Before threads start.
std::string TakeFromEnvironment(const char* name);

// Replaces the whole argv area with `title` (cut to fit) followed by NUL bytes, and sets the
// thread's name (prctl PR_SET_NAME). Async-signal-safe.
void SetProcessTitle(const char* title);

}  // namespace sluice::agent
