#include "integration/cluster_harness.h"

#include <algorithm>
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "testing/build_paths.h"

extern char** environ;

namespace sluice::integration {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const fs::path& out,
                           const fs::path& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && status_ < 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0 && status_ < 0) kill(pid_, sig);
}

int ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (status_ < 0) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = status;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(10ms);
  }
  return status_;
}

bool ChildProcess::Running() { return pid_ > 0 && Wait(0ms) < 0; }

void ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (!Running()) return;
  Signal(SIGTERM);
  if (Wait(grace) < 0) {
    Signal(SIGKILL);
    Wait(10s);
  }
}

std::string DefaultClusterYaml(const std::string& hosts_and_queues) {
  return hosts_and_queues + R"(
auth:
  agent_token: agent-token
  users:
    - {name: alice, token: alice-token, unix_user: nobody}
    - {name: bob, token: bob-token, unix_user: nobody}
    - {name: root, token: admin-token, admin: true, unix_user: nobody}
)";
}

Cluster::Cluster(const std::string& yaml) {
  testing::WriteFile(dir() / "cluster.yaml", yaml);
  fs::create_directories(dir() / "logs");
  fs::create_directories(dir() / "cli");
  // Jobs run as nobody (DefaultClusterYaml's unix_user): they write in dir() and dir()/cli
  // (the CLI's working directory, hence their default cwd).
  fs::permissions(dir(), fs::perms::all);
  fs::permissions(dir() / "cli", fs::perms::all);
}

Cluster::~Cluster() {
  for (auto& [name, agent] : agents_) agent->Stop(5s);
  if (server_) server_->Stop(5s);
}

bool Cluster::StartServer(std::string* error, const std::vector<std::string>& extra_flags) {
  const int start = ++server_starts_;
  const fs::path out = dir() / "logs" / ("server." + std::to_string(start) + ".out");
  const fs::path err = dir() / "logs" / ("server." + std::to_string(start) + ".err");
  std::vector<std::string> argv = {sluice::testing::SluiceBinary(),
                                   "server",
                                   "--config",
                                   (dir() / "cluster.yaml").string(),
                                   "--state",
                                   state_dir().string(),
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port_)};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  // Tests of host loss expect it after the lease (the behaviour before issue 44) unless they
  // give an absence of their own.
  if (std::find(extra_flags.begin(), extra_flags.end(), "--agent-absence-seconds") ==
      extra_flags.end()) {
    argv.insert(argv.end(), {"--agent-absence-seconds", "0"});
  }
  // Debugging aid: SLUICE_TEST_SERVER_WRAPPER=/path/to/script runs the server under it.
  if (const char* wrapper = std::getenv("SLUICE_TEST_SERVER_WRAPPER"); wrapper != nullptr) {
    argv.insert(argv.begin(), wrapper);
  }
  server_ = std::make_unique<ChildProcess>(argv, out, err);
  bool listening = Eventually(
      [&] {
        auto text = testing::ReadFile(out);
        if (text && text->find("listening on ") != std::string::npos) return true;
        return !server_->Running();
      },
      20s);
  auto text = testing::ReadFile(out).value_or("");
  const size_t at = text.find("listening on ");
  if (!listening || at == std::string::npos) {
    if (error != nullptr) *error = testing::ReadFile(err).value_or("") + text;
    return false;
  }
  const size_t colon = text.find(':', at);
  port_ = std::stoi(text.substr(colon + 1));
  url_ = "http://127.0.0.1:" + std::to_string(port_);
  return true;
}

void Cluster::KillServer(int sig) {
  if (!server_) return;
  server_->Signal(sig);
  server_->Wait(20s);
}

void Cluster::StartAgent(const std::string& name, int slots, const std::string& server_url,
                         const std::vector<std::string>& extra_flags,
                         const std::vector<std::string>& env) {
  const fs::path log = dir() / "logs" / ("agent." + name + ".log");
  std::vector<std::string> argv;
  if (!env.empty()) argv.push_back("/usr/bin/env");
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), {sluice::testing::SluiceBinary(), "agent", "--name", name, "--server",
                           server_url.empty() ? url_ : server_url, "--token", "agent-token",
                           "--slots", std::to_string(slots), "--work-dir", dir().string(),
                           "--cgroup-path",
                           // Distinct from other test processes' agents of the same name.
                           "sluice-test-" + std::to_string(getpid()) + "/" + name});
  if (std::find(extra_flags.begin(), extra_flags.end(), "--fence-grace-ms") == extra_flags.end()) {
    argv.insert(argv.end(), {"--fence-grace-ms", "300"});  // unless the test gives its own
  }
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  agents_[name] = std::make_unique<ChildProcess>(argv, log, log);
}

void Cluster::StopAgent(const std::string& name, int sig) {
  auto it = agents_.find(name);
  if (it == agents_.end()) return;
  it->second->Signal(sig);
  if (it->second->Wait(10s) < 0) it->second->Stop();
}

void Cluster::SignalAgent(const std::string& name, int sig) {
  auto it = agents_.find(name);
  if (it != agents_.end()) it->second->Signal(sig);
}

bool Cluster::AgentRunning(const std::string& name) {
  auto it = agents_.find(name);
  return it != agents_.end() && it->second->Running();
}

int Cluster::AgentExitStatus(const std::string& name) {
  auto it = agents_.find(name);
  if (it == agents_.end()) return -1;
  const int status = it->second->Wait(std::chrono::milliseconds(0));
  return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

testing::ProcessResult Cluster::Cli(std::vector<std::string> args, const std::string& token,
                                    const std::vector<std::string>& env) {
  args.insert(args.begin(), sluice::testing::SluiceBinary());
  // Flags after `--` would be part of the command: put the connection flags first.
  std::vector<std::string> argv = {args[0], args[1], "--server", url_, "--token", token};
  argv.insert(argv.end(), args.begin() + 2, args.end());
  if (!env.empty()) {
    argv.insert(argv.begin(), env.begin(), env.end());
    argv.insert(argv.begin(), "/usr/bin/env");
  }
  return testing::RunProcess(argv, dir() / "cli", 60s);
}

namespace {

json Request(const std::string& url, const std::string& method, const std::string& path,
             const json* body, const std::string& token, int* status) {
  httplib::Client client(url);
  client.set_connection_timeout(2s);
  client.set_read_timeout(20s);
  if (!token.empty()) client.set_bearer_token_auth(token.c_str());
  httplib::Result result = method == "GET"
                               ? client.Get(path.c_str())
                               : client.Post(path.c_str(), body->dump(), "application/json");
  if (status != nullptr) *status = result ? result->status : 0;
  if (!result) return json();
  json parsed = json::parse(result->body, nullptr, false);
  return parsed.is_discarded() ? json() : parsed;
}

}  // namespace

json Cluster::Get(const std::string& path, const std::string& token, int* status) {
  return Request(url_, "GET", path, nullptr, token, status);
}

json Cluster::Post(const std::string& path, const json& body, const std::string& token,
                   int* status) {
  return Request(url_, "POST", path, &body, token, status);
}

std::string Cluster::Logs() {
  std::string out;
  for (const auto& entry : fs::directory_iterator(dir() / "logs")) {
    std::string text = testing::ReadFile(entry.path()).value_or("");
    if (text.size() > 4000) text = "..." + text.substr(text.size() - 4000);
    out += "==> " + entry.path().filename().string() + "\n" + text;
  }
  return out;
}

std::string Cluster::JobState(int64_t id) {
  json job = Job(id);
  return job.is_object() && job["state"].is_string() ? job["state"].get<std::string>() : "";
}

std::string Cluster::HostState(const std::string& name) {
  json hosts = Get("/v1/hosts");
  if (!hosts.is_array()) return "";
  for (const json& host : hosts) {
    if (host.value("name", "") == name) return host.value("state", "");
  }
  return "";
}

int64_t Cluster::EndedCount(const std::vector<int64_t>& ids) {
  json jobs = Get("/v1/jobs");
  if (!jobs.is_array()) return -1;
  std::map<int64_t, std::string> states;
  for (const json& job : jobs) states[job["id"].get<int64_t>()] = job["state"];
  int64_t ended = 0;
  for (int64_t id : ids) {
    const std::string& state = states[id];
    ended += state == "DONE" || state == "EXIT" || state == "CANCELLED";
  }
  return ended;
}

bool Cluster::WaitAllEnded(const std::vector<int64_t>& ids, std::chrono::milliseconds timeout) {
  return Eventually([&] { return EndedCount(ids) == static_cast<int64_t>(ids.size()); },
                    timeout);
}

bool Cluster::WaitAllEndedWhileProgressing(const std::vector<int64_t>& ids,
                                           std::chrono::milliseconds stall) {
  int64_t ended = 0;
  return testing::EventuallyProgressing(
      [&] {
        ended = EndedCount(ids);
        return ended == static_cast<int64_t>(ids.size());
      },
      [&] { return ended; }, stall);
}

}  // namespace sluice::integration
