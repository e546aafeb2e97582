#include "testing/etcd_cluster.h"

#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <thread>

#include "testing/free_ports.h"

namespace sluice::testing {
namespace {

constexpr const char* kEtcd = "/usr/bin/etcd";

std::string Loopback(int port) { return "http://127.0.0.1:" + std::to_string(port); }

}  // namespace

std::optional<std::string> EtcdCluster::Unavailable() {
  if (access(kEtcd, X_OK) != 0) {
    return std::string(kEtcd) + " is not installed (Debian etcd-server; scripts/setup)";
  }
  return std::nullopt;
}

std::unique_ptr<EtcdCluster> EtcdCluster::Start(int members, std::string& error) {
  // A port can be taken by another process between FreeLoopbackPorts and etcd's bind; the
  // member then exits at once. The cluster is started afresh, on new ports, a few times.
  constexpr int kAttempts = 3;
  error.clear();
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    std::string why;
    std::unique_ptr<EtcdCluster> cluster = TryStart(members, why);
    if (cluster) return cluster;
    error += "attempt " + std::to_string(attempt) + ": " + why + "\n";
  }
  return nullptr;
}

std::unique_ptr<EtcdCluster> EtcdCluster::TryStart(int members, std::string& error) {
  static int started = 0;
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  if (!cluster->dir_.ok()) {
    error = "no temporary directory";
    return nullptr;
  }
  cluster->token_ = "sluice-test-" + std::to_string(getpid()) + "-" + std::to_string(++started);
  const std::vector<int> ports = FreeLoopbackPorts(2 * members);
  for (int i = 0; i < members; ++i) {
    Member m{.name = "m" + std::to_string(i),
             .client_port = ports[2 * i],
             .peer_port = ports[2 * i + 1]};
    cluster->initial_cluster_ += (i > 0 ? "," : "") + m.name + "=" + Loopback(m.peer_port);
    cluster->members_.push_back(m);
  }
  for (int i = 0; i < members; ++i) {
    if (!cluster->Spawn(i)) {
      error = "cannot start etcd member " + std::to_string(i);
      return nullptr;
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int i = 0; i < members; ++i) {
    while (!cluster->WaitHealthy(i, std::chrono::milliseconds(500))) {
      const bool exited = cluster->Exited(i);
      if (exited || std::chrono::steady_clock::now() >= deadline) {
        error = "etcd member " + std::to_string(i) +
                (exited ? " exited" : " not healthy within 20 s") + "; its log ends:\n" +
                cluster->LogTail(i, 12);
        return nullptr;
      }
    }
  }
  return cluster;
}

bool EtcdCluster::Exited(int i) {
  Member& m = members_[i];
  if (m.pid <= 0 || waitpid(m.pid, nullptr, WNOHANG) != m.pid) return false;
  m.pid = -1;
  return true;
}

std::string EtcdCluster::LogTail(int i, int lines) const {
  std::ifstream in(dir_.path() / (members_[i].name + ".log"));
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(std::move(line));
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  std::string out;
  for (const std::string& line : tail) out += line + "\n";
  return out;
}

bool EtcdCluster::Spawn(int i) {
  Member& m = members_[i];
  const std::string data = (dir_.path() / m.name).string();
  const std::string log = (dir_.path() / (m.name + ".log")).string();
  std::vector<std::string> args = {kEtcd,
                                   "--name",
                                   m.name,
                                   "--data-dir",
                                   data,
                                   "--listen-client-urls",
                                   Loopback(m.client_port),
                                   "--advertise-client-urls",
                                   Loopback(m.client_port),
                                   "--listen-peer-urls",
                                   Loopback(m.peer_port),
                                   "--initial-advertise-peer-urls",
                                   Loopback(m.peer_port),
                                   "--initial-cluster",
                                   initial_cluster_,
                                   "--initial-cluster-state",
                                   "new",
                                   "--initial-cluster-token",
                                   token_,
                                   "--heartbeat-interval",
                                   "50",
                                   "--election-timeout",
                                   "500",
                                   "--max-txn-ops",
                                   "4096",
                                   "--max-request-bytes",
                                   "8388608",
                                   "--logger",
                                   "zap",
                                   "--log-outputs",
                                   "stderr"};
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(kEtcd, argv.data());
    _exit(127);
  }
  m.pid = pid;
  return true;
}

EtcdCluster::~EtcdCluster() {
  for (int i = 0; i < size(); ++i) Kill(i);
}

std::string EtcdCluster::endpoint(int i) const {
  return "127.0.0.1:" + std::to_string(members_[i].client_port);
}

std::string EtcdCluster::Url(const std::string& prefix) const {
  std::string url = "etcd://";
  for (int i = 0; i < size(); ++i) url += (i > 0 ? "," : "") + endpoint(i);
  return url + prefix;
}

void EtcdCluster::Kill(int i) {
  Member& m = members_[i];
  if (m.pid <= 0) return;
  kill(m.pid, SIGCONT);  // a paused member dies as well
  kill(m.pid, SIGKILL);
  waitpid(m.pid, nullptr, 0);
  m.pid = -1;
}

void EtcdCluster::Pause(int i) {
  if (members_[i].pid > 0) kill(members_[i].pid, SIGSTOP);
}

void EtcdCluster::Resume(int i) {
  if (members_[i].pid > 0) kill(members_[i].pid, SIGCONT);
}

bool EtcdCluster::Restart(int i) { return members_[i].pid <= 0 && Spawn(i); }

bool EtcdCluster::WaitHealthy(int i, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  httplib::Client client("127.0.0.1", members_[i].client_port);
  client.set_connection_timeout(std::chrono::milliseconds(200));
  client.set_read_timeout(std::chrono::milliseconds(1000));
  while (std::chrono::steady_clock::now() < deadline) {
    httplib::Result res = client.Get("/health");
    if (res && res->status == 200 && res->body.find("\"true\"") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace sluice::testing
