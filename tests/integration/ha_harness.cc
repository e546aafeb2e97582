#include "integration/ha_harness.h"

#include <algorithm>
#include <cctype>
#include <httplib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "client/rest_client.h"
#include "testing/build_paths.h"
#include "testing/free_ports.h"

namespace sluice::integration {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string DefaultYaml(int agents, int slots) {
  return DefaultClusterYaml("hosts:\n  - name: h[1-" + std::to_string(agents) +
                            "]\n    slots: " + std::to_string(slots) +
                            "\nqueues:\n  - name: normal\n    policy: fifo\n");
}

}  // namespace

std::unique_ptr<HaCluster> HaCluster::Start(const HaOptions& options, std::string& error) {
  if (auto why = testing::EtcdCluster::Unavailable()) {
    error = *why;
    return nullptr;
  }
  std::unique_ptr<HaCluster> c(new HaCluster());
  c->options_ = options;
  fs::create_directories(c->dir() / "logs");
  fs::create_directories(c->dir() / "cli");
  // Jobs run as nobody (DefaultClusterYaml's unix_user): they write in dir() and dir()/cli.
  fs::permissions(c->dir(), fs::perms::all);
  fs::permissions(c->dir() / "cli", fs::perms::all);
  testing::WriteFile(c->dir() / "cluster.yaml", options.yaml.empty()
                                                    ? DefaultYaml(options.agents, options.slots)
                                                    : options.yaml);
  c->etcd_ = testing::EtcdCluster::Start(3, error);
  if (!c->etcd_) return nullptr;
  c->ports_ = testing::FreeLoopbackPorts(options.controllers);
  for (int i = 0; i < options.controllers; ++i) {
    c->controllers_.emplace_back();
    c->starts_.push_back(0);
    if (!options.cuttable) continue;
    c->agent_proxies_.push_back(std::make_unique<TcpProxy>(c->ports_[i]));
    c->etcd_proxies_.emplace_back();
    for (int m = 0; m < c->etcd_->size(); ++m) {
      c->etcd_proxies_[i].push_back(std::make_unique<TcpProxy>(c->etcd_->client_port(m)));
    }
  }
  for (int i = 0; i < options.controllers; ++i) {
    if (!c->StartController(i)) {
      error = "controller " + std::to_string(i) + " did not start:\n" + c->Logs();
      return nullptr;
    }
  }
  const int leader = c->WaitLeader(20s);
  if (leader < 0) {
    error = "no controller leads within 20 s:\n" + c->Logs();
    return nullptr;
  }
  const std::string agent_urls = c->AgentUrls(options.agents_try_standby_first ? leader : -1);
  for (int i = 1; i <= options.agents; ++i) {
    const std::string name = "h" + std::to_string(i);
    const fs::path log = c->dir() / "logs" / ("agent." + name + ".log");
    c->agents_.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{
            sluice::testing::SluiceBinary(), "agent", "--name", name, "--server", agent_urls,
            "--token", "agent-token", "--slots", std::to_string(options.slots), "--work-dir",
            c->dir().string(), "--fence-grace-ms", "300",
            // Distinct from other test processes' agents of the same name.
            "--cgroup-path", "sluice-test-" + std::to_string(getpid()) + "/" + name},
        log, log));
  }
  const bool registered = Eventually(
      [&] {
        json hosts = c->Get("/v1/hosts");
        if (!hosts.is_array()) return false;
        int ok = 0;
        for (const json& h : hosts) ok += h.value("state", "") == "ok";
        return ok == options.agents;
      },
      20s);
  if (!registered) {
    error = "agents did not register within 20 s:\n" + c->Logs();
    return nullptr;
  }
  return c;
}

HaCluster::~HaCluster() {
  for (auto& agent : agents_) agent->Stop(5s);
  for (auto& controller : controllers_) {
    if (controller) controller->Stop(5s);
  }
}

std::string HaCluster::url(int i) const { return "http://127.0.0.1:" + std::to_string(ports_[i]); }

std::string HaCluster::AgentUrl(int i) const {
  if (agent_proxies_.empty()) return url(i);
  return "http://127.0.0.1:" + std::to_string(agent_proxies_[i]->port());
}

std::string HaCluster::AgentUrls(int last) const {
  std::string out;
  for (int i = 0; i < static_cast<int>(ports_.size()); ++i) {
    if (i != last) out += (out.empty() ? "" : ",") + AgentUrl(i);
  }
  return last >= 0 ? out + "," + AgentUrl(last) : out;
}

std::string HaCluster::StoreUrl(int i) const {
  if (etcd_proxies_.empty()) return etcd_->Url(options_.store_prefix);
  std::string url = "etcd://";
  for (size_t m = 0; m < etcd_proxies_[i].size(); ++m) {
    url += (m > 0 ? "," : "") + std::string("127.0.0.1:") +
           std::to_string(etcd_proxies_[i][m]->port());
  }
  return url + options_.store_prefix;
}

void HaCluster::CutEtcd(int i, bool cut) {
  for (auto& proxy : etcd_proxies_.at(i)) proxy->Cut(cut);
}

void HaCluster::CutAgents(int i, bool cut) { agent_proxies_.at(i)->Cut(cut); }

std::string HaCluster::urls() const {
  std::string out;
  for (size_t i = 0; i < ports_.size(); ++i) out += (i > 0 ? "," : "") + url(static_cast<int>(i));
  return out;
}

bool HaCluster::StartController(int i) {
  const int start = ++starts_[i];
  const std::string base = "server" + std::to_string(i) + "." + std::to_string(start);
  const fs::path out = dir() / "logs" / (base + ".out");
  const fs::path err = dir() / "logs" / (base + ".err");
  std::vector<std::string> argv = {sluice::testing::SluiceBinary(),
                                   "server",
                                   "--config",
                                   (dir() / "cluster.yaml").string(),
                                   "--store",
                                   StoreUrl(i),
                                   "--advertise",
                                   AgentUrl(i),
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(ports_[i]),
                                   "--leader-lease-seconds",
                                   std::to_string(options_.leader_lease_seconds)};
  argv.insert(argv.end(), options_.server_flags.begin(), options_.server_flags.end());
  // Host loss after the lease, as these tests expect (not the default absence, issue 44).
  if (std::find(options_.server_flags.begin(), options_.server_flags.end(),
                "--agent-absence-seconds") == options_.server_flags.end()) {
    argv.insert(argv.end(), {"--agent-absence-seconds", "0"});
  }
  controllers_[i] = std::make_unique<ChildProcess>(argv, out, err);
  return Eventually(
             [&] {
               auto text = testing::ReadFile(out);
               return (text && text->find("listening on ") != std::string::npos) ||
                      !controllers_[i]->Running();
             },
             20s) &&
         controllers_[i]->Running();
}

void HaCluster::KillController(int i, int sig) {
  controllers_[i]->Signal(sig);
  if (sig == SIGKILL || sig == SIGTERM) controllers_[i]->Wait(20s);
}

std::string HaCluster::ControllerLog(int i) {
  const std::string base = "server" + std::to_string(i) + "." + std::to_string(starts_[i]);
  return testing::ReadFile(dir() / "logs" / (base + ".err")).value_or("");
}

json HaCluster::Health(int i) {
  httplib::Client client(url(i));
  client.set_connection_timeout(1s);
  client.set_read_timeout(1s);  // a paused controller accepts the connection, never answers
  httplib::Result r = client.Get("/healthz");
  if (!r || r->status != 200) return nullptr;
  return json::parse(r->body, nullptr, false);
}

int HaCluster::Leader() {
  for (int i = 0; i < static_cast<int>(controllers_.size()); ++i) {
    json h = Health(i);
    if (h.is_object() && h.value("role", "") == "leader") return i;
  }
  return -1;
}

int HaCluster::WaitLeader(std::chrono::milliseconds timeout) {
  int leader = -1;
  Eventually(
      [&] {
        leader = Leader();
        return leader >= 0 && HealthField(leader, "first_cycle_ms", int64_t{0}) > 0;
      },
      timeout);
  return leader >= 0 && HealthField(leader, "first_cycle_ms", int64_t{0}) > 0 ? leader : -1;
}

testing::ProcessResult HaCluster::Cli(std::vector<std::string> args, const std::string& token,
                                      const std::string& server) {
  // Flags after `--` would be part of the command: the connection flags go first.
  std::vector<std::string> argv = {sluice::testing::SluiceBinary(),  args[0],   "--server",
                                   server.empty() ? urls() : server, "--token", token};
  argv.insert(argv.end(), args.begin() + 1, args.end());
  fs::create_directories(dir() / "cli");
  return testing::RunProcess(argv, dir() / "cli", std::chrono::seconds(60));
}

json HaCluster::Get(const std::string& path, int* status) {
  client::RestClient rest({.server = urls(), .token = "admin-token", .timeout = 10s});
  Result<json> r = rest.Get(path);
  if (status != nullptr)
    *status = r ? 200 : (r.error().code() == StatusCode::kUnavailable ? 503 : 500);
  return r ? *r : json(nullptr);
}

json HaCluster::Post(const std::string& path, const json& body, int* status) {
  client::RestClient rest({.server = urls(), .token = "alice-token", .timeout = 10s});
  Result<json> r = rest.Post(path, body);
  if (status != nullptr)
    *status = r ? 201 : (r.error().code() == StatusCode::kUnavailable ? 503 : 500);
  return r ? *r : json(nullptr);
}

std::map<int64_t, std::string> HaCluster::States() {
  std::map<int64_t, std::string> states;
  json jobs = Get("/v1/jobs");
  if (!jobs.is_array()) return states;
  for (const json& job : jobs) states[job["id"].get<int64_t>()] = job.value("state", "");
  return states;
}

std::string HaCluster::Logs() {
  std::string out;
  for (const auto& entry : fs::directory_iterator(dir() / "logs")) {
    std::string text = testing::ReadFile(entry.path()).value_or("");
    if (text.size() > 3000) text = "..." + text.substr(text.size() - 3000);
    out += "==> " + entry.path().filename().string() + "\n" + text;
  }
  return out;
}

std::string HaCluster::LinesAbout(int64_t id) {
  const std::string name = "job " + std::to_string(id);
  std::string out;
  for (const auto& entry : fs::directory_iterator(dir() / "logs")) {
    std::istringstream text(testing::ReadFile(entry.path()).value_or(""));
    std::string line;
    while (std::getline(text, line)) {
      for (size_t at = line.find(name); at != std::string::npos; at = line.find(name, at + 1)) {
        const size_t end = at + name.size();
        if (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) continue;
        out += entry.path().filename().string() + ": " + line + "\n";
        break;
      }
    }
  }
  return out;
}

std::vector<int64_t> ReadIds(const fs::path& file) {
  std::vector<int64_t> ids;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      ids.push_back(std::stoll(line));
    } catch (...) {
    }
  }
  return ids;
}

}  // namespace sluice::integration
