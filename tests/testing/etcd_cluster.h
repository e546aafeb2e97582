// EtcdCluster: a real etcd cluster on loopback for tests (and benchmarks) of the etcd store
// and, later, of controllers in high availability.
//
// Start() runs N `etcd` members (the Debian etcd-server binary) on free loopback ports with
// their data directories in a fresh temporary directory, each a child process killed with
// its parent (PR_SET_PDEATHSIG), and waits (bounded) until every member reports a healthy
// cluster. Members are stopped by PID: Kill (SIGKILL), Pause/Resume (SIGSTOP/SIGCONT); Restart
// runs a killed member again on the same ports and data. The destructor kills every member
// and removes the directory. Flags: fast elections (--heartbeat-interval 50
// --election-timeout 500) and the txn limits the etcd store expects (docs/ha.md).
// Thread-safety: one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "testing/subprocess.h"

namespace sluice::testing {

class EtcdCluster {
 public:
  // The reason tests must skip, or nullopt when the etcd binary is installed.
  static std::optional<std::string> Unavailable();
  // nullptr with `error` set (with the failing member's log) when the cluster did not become
  // healthy in time, after starting it afresh on new ports a few times.
  static std::unique_ptr<EtcdCluster> Start(int members, std::string& error);
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  // "127.0.0.1:PORT" of member i's client URL.
  std::string endpoint(int i) const;
  int client_port(int i) const { return members_[i].client_port; }
  // etcd://every-endpoint/PREFIX, for Store::OpenUrl.
  std::string Url(const std::string& prefix) const;

  void Kill(int i);
  void Pause(int i);
  void Resume(int i);
  // REQUIRES: member i was killed. Returns false if it could not be started.
  bool Restart(int i);
  // Waits until member i answers /health with a healthy cluster (has a leader, quorum).
  bool WaitHealthy(int i, std::chrono::milliseconds timeout) const;

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    pid_t pid = -1;
  };
  EtcdCluster() = default;
  static std::unique_ptr<EtcdCluster> TryStart(int members, std::string& error);
  bool Spawn(int i);
  // True once member i's process has ended (it is then reaped).
  bool Exited(int i);
  std::string LogTail(int i, int lines) const;

  TempDir dir_;
  std::vector<Member> members_;
  std::string initial_cluster_;
  std::string token_;
};

}  // namespace sluice::testing
