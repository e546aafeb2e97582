// Test support for high availability on loopback (SPEC §12, docs/ha.md): a real 3-member
// etcd cluster (testing/etcd_cluster.h), several real `sluice server --store etcd://...`
// controllers and real agents that know every controller, the CLI run as a process against
// the controller list, and REST through client::RestClient (which follows the leader).
//
// Every process is spawned here and stopped by PID at the end; every wait is bounded.
// Controllers listen on fixed free ports so that a killed one restarts on the same URL.
// Tokens as in cluster_harness.h (agent-token, alice-token, admin-token).
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "integration/cluster_harness.h"
#include "integration/tcp_proxy.h"
#include "testing/etcd_cluster.h"
#include "testing/subprocess.h"

// In a gtest test: `cluster` = HaCluster::Start(options), the test skipped when etcd is not
// installed and failed when the cluster did not come up.
#define START_OR_SKIP(cluster, options)                                             \
  std::string start_error;                                                          \
  auto cluster = HaCluster::Start(options, start_error);                            \
  if (!cluster && testing::EtcdCluster::Unavailable()) GTEST_SKIP() << start_error; \
  ASSERT_TRUE(cluster) << start_error

namespace sluice::integration {

struct HaOptions {
  int controllers = 2;
  int agents = 4;
  int slots = 4;
  int leader_lease_seconds = 1;
  std::string store_prefix = "/ha";
  std::vector<std::string> server_flags;  // extra `sluice server` flags
  std::string yaml;                       // the cluster YAML; empty: hosts h1..hN, queue normal
  // Partitions (issue 44): each controller reaches etcd through proxies of its own and the
  // agents reach each controller through one (its advertised URL, so that redirects go
  // there too); CutEtcd / CutAgents drop their bytes. The CLI and url(i) stay direct.
  bool cuttable = false;
  // Agents list the standbys before the leader in --server (their first answer is a 307).
  bool agents_try_standby_first = false;
};

class HaCluster {
 public:
  // Starts etcd, the controllers and the agents; nullptr with `error` set when something did
  // not come up in time (or etcd is not installed: testing::EtcdCluster::Unavailable()).
  static std::unique_ptr<HaCluster> Start(const HaOptions& options, std::string& error);
  ~HaCluster();

  const std::filesystem::path& dir() const { return dir_.path(); }
  testing::EtcdCluster& etcd() { return *etcd_; }
  // Every controller URL, comma-separated (the CLI's and the agents' --server).
  std::string urls() const;
  std::string url(int i) const;

  // GET /healthz of controller i (null when it does not answer).
  nlohmann::json Health(int i);
  // A field of controller i's /healthz; `fallback` when it does not answer.
  template <typename T>
  T HealthField(int i, const std::string& field, T fallback) {
    nlohmann::json h = Health(i);
    return h.is_object() ? h.value(field, fallback) : fallback;
  }
  // The controller whose /healthz says leader, or -1.
  int Leader();
  // Waits until a controller leads and has run its first cycle; returns it or -1.
  int WaitLeader(std::chrono::milliseconds timeout);

  // With `cuttable`: controller i's traffic to and from etcd / its agents dropped or not.
  void CutEtcd(int i, bool cut);
  void CutAgents(int i, bool cut);

  ChildProcess& controller(int i) { return *controllers_[i]; }
  bool StartController(int i);
  void KillController(int i, int sig = SIGKILL);
  std::string ControllerLog(int i);

  // `sluice ARGS --server URLS --token TOKEN`, bounded to 60 s.
  // `server` "" means every controller.
  testing::ProcessResult Cli(std::vector<std::string> args,
                             const std::string& token = "alice-token",
                             const std::string& server = "");
  // REST following the leader; null json on failure, `status` the HTTP status (0: none).
  nlohmann::json Get(const std::string& path, int* status = nullptr);
  nlohmann::json Post(const std::string& path, const nlohmann::json& body, int* status = nullptr);

  // Job id -> state, from the leader's listing (empty when it cannot be read).
  std::map<int64_t, std::string> States();
  std::string Logs();
  // Every log line (controllers and agents, all starts) that names job `id`: what a test
  // prints when that job misbehaved, where Logs()'s tails would have scrolled past it.
  std::string LinesAbout(int64_t id);

 private:
  HaCluster() = default;

  HaOptions options_;
  testing::TempDir dir_;
  std::unique_ptr<testing::EtcdCluster> etcd_;
  std::vector<int> ports_;
  std::vector<std::unique_ptr<ChildProcess>> controllers_;
  std::vector<int> starts_;
  std::vector<std::unique_ptr<ChildProcess>> agents_;
  // With `cuttable`: etcd_proxies_[i] are controller i's to each member; agent_proxies_[i]
  // forwards to controller i.
  std::vector<std::vector<std::unique_ptr<TcpProxy>>> etcd_proxies_;
  std::vector<std::unique_ptr<TcpProxy>> agent_proxies_;
  // The URLs agents use (and controllers advertise): the proxies, or the direct URLs.
  std::string AgentUrl(int i) const;
  // Every controller's agent URL, comma-separated; `first` (>= 0) goes last (the leader, with
  // agents_try_standby_first).
  std::string AgentUrls(int last = -1) const;
  std::string StoreUrl(int i) const;
};

// Ids appended to `file` by jobs, in order (one per line).
std::vector<int64_t> ReadIds(const std::filesystem::path& file);

}  // namespace sluice::integration
