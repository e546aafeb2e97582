#include "agent/cpu_topology.h"

#include <sched.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace sluice::agent {
namespace {

constexpr int32_t kMaxCpu = 65535;

std::optional<std::string> ReadLine(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// A non-negative number 0..kMaxCpu, or -1.
int32_t Number(std::string_view text) {
  int32_t value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > kMaxCpu) {
    return -1;
  }
  return value;
}

int32_t ReadNumber(const std::filesystem::path& file, int32_t fallback) {
  std::optional<std::string> line = ReadLine(file);
  if (!line) return fallback;
  const int32_t value = Number(*line);
  return value < 0 ? fallback : value;
}

}  // namespace

Result<std::set<int32_t>> ParseCpuList(std::string_view text) {
  std::set<int32_t> cpus;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view part = text.substr(start, comma - start);
    const size_t dash = part.find('-');
    const int32_t first = Number(part.substr(0, dash));
    const int32_t last = dash == std::string_view::npos ? first : Number(part.substr(dash + 1));
    if (first < 0 || last < first) {
      return InvalidArgument("CPU list: expected N or N-M (0-65535), got \"" + std::string(part) +
                             "\"");
    }
    for (int32_t cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
    start = comma + 1;
  }
  return cpus;
}

std::string FormatCpuList(const std::set<int32_t>& cpus) {
  std::string out;
  for (auto it = cpus.begin(); it != cpus.end();) {
    const int32_t first = *it;
    int32_t last = first;
    for (++it; it != cpus.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ',';
    out += std::to_string(first);
    if (last != first) out += "-" + std::to_string(last);
  }
  return out;
}

Result<std::vector<LogicalCpu>> ReadCpuTopology(const std::string& sys) {
  const std::filesystem::path cpu_dir = std::filesystem::path(sys) / "devices/system/cpu";
  std::optional<std::string> online = ReadLine(cpu_dir / "online");
  if (!online) return NotFound("no CPU list at " + (cpu_dir / "online").string());
  Result<std::set<int32_t>> numbers = ParseCpuList(*online);
  if (!numbers) return numbers.error().WithPrefix((cpu_dir / "online").string());
  std::map<int32_t, int32_t> numa_of;
  const std::filesystem::path node_dir = std::filesystem::path(sys) / "devices/system/node";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(node_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("node")) continue;
    const int32_t node = Number(std::string_view(name).substr(4));
    std::optional<std::string> list = ReadLine(entry.path() / "cpulist");
    if (node < 0 || !list) continue;
    Result<std::set<int32_t>> cpus = ParseCpuList(*list);
    if (!cpus) return cpus.error().WithPrefix((entry.path() / "cpulist").string());
    for (int32_t cpu : *cpus) numa_of[cpu] = node;
  }
  std::vector<LogicalCpu> out;
  for (int32_t cpu : *numbers) {
    const std::filesystem::path topology = cpu_dir / ("cpu" + std::to_string(cpu)) / "topology";
    auto numa = numa_of.find(cpu);
    out.push_back({.cpu = cpu,
                   .socket = ReadNumber(topology / "physical_package_id", 0),
                   .core = ReadNumber(topology / "core_id", cpu),
                   .numa = numa == numa_of.end() ? 0 : numa->second});
  }
  return out;
}

std::set<int32_t> ReadAllowedMems(const std::string& proc) {
  std::ifstream in(proc + "/self/status");
  std::string line;
  constexpr std::string_view kKey = "Mems_allowed_list:";
  while (std::getline(in, line)) {
    if (!line.starts_with(kKey)) continue;
    std::string_view list = std::string_view(line).substr(kKey.size());
    while (!list.empty() && (list.front() == ' ' || list.front() == '\t')) list.remove_prefix(1);
    Result<std::set<int32_t>> nodes = ParseCpuList(list);
    return nodes ? *nodes : std::set<int32_t>{};
  }
  return {};
}

Result<std::vector<LogicalCpu>> ReadUsableCpus(const std::string& sys) {
  Result<std::vector<LogicalCpu>> cpus = ReadCpuTopology(sys);
  if (!cpus) return cpus;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    std::erase_if(*cpus, [&](const LogicalCpu& cpu) {
      return cpu.cpu >= CPU_SETSIZE || !CPU_ISSET(cpu.cpu, &allowed);
    });
  }
  if (cpus->empty()) return FailedPrecondition("this process may run on none of the CPUs found");
  return cpus;
}

std::string DescribeCpus(const std::vector<LogicalCpu>& cpus) {
  std::set<int32_t> sockets;
  std::set<std::pair<int32_t, int32_t>> cores;
  std::set<int32_t> nodes;
  for (const LogicalCpu& cpu : cpus) {
    sockets.insert(cpu.socket);
    cores.insert({cpu.socket, cpu.core});
    nodes.insert(cpu.numa);
  }
  if (cpus.empty()) return "no CPUs";
  std::ostringstream out;
  out << sockets.size() << (sockets.size() == 1 ? " socket" : " sockets") << " x "
      << cores.size() / sockets.size() << " cores x " << cpus.size() / cores.size() << " threads ("
      << cpus.size() << " CPUs, NUMA " << (nodes.size() == 1 ? "node " : "nodes ")
      << FormatCpuList(nodes) << ")";
  return out.str();
}

}  // namespace sluice::agent
