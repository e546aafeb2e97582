// Test support for loopback integration tests: a real `sluice server` and real `sluice agent`
// processes in a temp directory, the CLI run as a process, and REST calls for inspection.
//
// Every process is spawned by this harness, stopped by PID (SIGTERM, then SIGKILL) when the
// harness ends, and every wait is a bounded poll. The server listens on port 0 and the harness
// reads the printed port; a restarted server reuses that port so agents reconnect.
// Tokens: agent-token (agents), admin-token (admin), alice-token, bob-token. Jobs of the
// default users run as `nobody`: dir() and dir()/cli are writable by everyone. Agents use
// the default containment (cgroups where the machine has them, as root) under a cgroup path
// of their own (`sluice-test-<test pid>/<name>`).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::integration {

// A child process with stdout/stderr in files; killed (SIGKILL) at destruction if alive.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& out,
               const std::filesystem::path& err);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool ok() const { return pid_ > 0; }
  void Signal(int sig);
  // Waits at most `timeout` for the exit; returns the wait status or -1 if still running.
  int Wait(std::chrono::milliseconds timeout);
  bool Running();
  // SIGTERM, up to `grace`, then SIGKILL; reaps.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// Polls `condition` for at most `timeout` (testing/wait.h); returns its last value.
using testing::Eventually;

std::string DefaultClusterYaml(const std::string& hosts_and_queues);

class Cluster {
 public:
  // `yaml` is the whole cluster YAML (use DefaultClusterYaml for the auth section).
  explicit Cluster(const std::string& yaml);
  ~Cluster();

  const std::filesystem::path& dir() const { return dir_.path(); }
  std::filesystem::path state_dir() const { return dir() / "state"; }
  const std::string& url() const { return url_; }
  int port() const { return port_; }

  // Starts the server (reusing the previous port after the first start). Returns false with
  // the server's stderr in `error` if it exits or prints no address within 20 s.
  bool StartServer(std::string* error = nullptr, const std::vector<std::string>& extra_flags = {});
  void KillServer(int sig = SIGKILL);
  ChildProcess* server() { return server_.get(); }

  // Starts an agent; `server_url` defaults to the server's URL (a proxy may stand between);
  // `extra_flags` go after the harness's own, `env` (NAME=VALUE) into its environment.
  void StartAgent(const std::string& name, int slots, const std::string& server_url = "",
                  const std::vector<std::string>& extra_flags = {},
                  const std::vector<std::string>& env = {});
  void StopAgent(const std::string& name, int sig = SIGTERM);
  // Sends `sig` to the agent without waiting (SIGSTOP, SIGCONT).
  void SignalAgent(const std::string& name, int sig);
  bool AgentRunning(const std::string& name);
  // The exit status of an agent that has exited; -1 while it runs (or was never started).
  int AgentExitStatus(const std::string& name);

  // Runs the CLI: `sluice ARGS --server URL --token TOKEN`, bounded to 60 s; `env`
  // (NAME=VALUE) is added to the environment it inherits from the test.
  testing::ProcessResult Cli(std::vector<std::string> args,
                             const std::string& token = "alice-token",
                             const std::vector<std::string>& env = {});

  // REST for inspection. Returns a null json on failure; `status` gets the HTTP status.
  nlohmann::json Get(const std::string& path, const std::string& token = "admin-token",
                     int* status = nullptr);
  nlohmann::json Post(const std::string& path, const nlohmann::json& body,
                      const std::string& token = "alice-token", int* status = nullptr);

  // Every log of this cluster (server starts, agents), for failure messages.
  std::string Logs();

  nlohmann::json Job(int64_t id) { return Get("/v1/jobs/" + std::to_string(id)); }
  std::string JobState(int64_t id);
  std::string HostState(const std::string& name);
  // How many of the listed jobs are in a terminal state (DONE, EXIT, CANCELLED); -1 when the
  // jobs cannot be read.
  int64_t EndedCount(const std::vector<int64_t>& ids);
  // Waits until every listed job is in a terminal state.
  bool WaitAllEnded(const std::vector<int64_t>& ids, std::chrono::milliseconds timeout);
  // The same for many jobs, which end at the machine's pace: waits as long as jobs keep
  // ending, and gives up once none has for `stall` (testing::EventuallyProgressing).
  bool WaitAllEndedWhileProgressing(const std::vector<int64_t>& ids,
                                    std::chrono::milliseconds stall);

 private:
  testing::TempDir dir_;
  std::unique_ptr<ChildProcess> server_;
  std::map<std::string, std::unique_ptr<ChildProcess>> agents_;
  std::string url_;
  int port_ = 0;
  int server_starts_ = 0;
};

}  // namespace sluice::integration
