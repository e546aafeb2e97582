#include "agent/host_stanza.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

namespace sluice::agent {
namespace {

// A uuid YAML reads back as the same plain scalar.
bool PlainUuid(const std::string& uuid) {
  return !uuid.empty() && std::all_of(uuid.begin(), uuid.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
  });
}

std::string Device(const core::GpuDevice& d) {
  std::ostringstream out;
  out << "{index: " << d.index;
  if (!d.model.empty()) out << ", model: " << d.model;
  if (d.memory_mb > 0) out << ", memory: " << d.memory_mb;
  if (d.numa >= 0) out << ", numa: " << d.numa;
  if (!d.nvlink.empty()) {
    out << ", nvlink: [";
    for (size_t i = 0; i < d.nvlink.size(); ++i) out << (i > 0 ? ", " : "") << d.nvlink[i];
    out << "]";
  }
  if (d.path != "/dev/nvidia" + std::to_string(d.index) && !d.path.empty()) {
    out << ", path: " << d.path;
  }
  if (PlainUuid(d.uuid)) out << ", uuid: " << d.uuid;
  out << "}";
  return out.str();
}

// `text` fit for a comment line.
std::string OneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// What the detection found, as the comment above the stanza says it.
std::string Summary(const Result<GpuInventory>& gpus) {
  if (!gpus) return "GPU detection failed: " + OneLine(gpus.error().message());
  if (!gpus->nvidia_smi) return "no nvidia-smi on PATH: no GPUs detected";
  return "nvidia-smi lists " + std::to_string(gpus->devices.size()) + " GPUs";
}

}  // namespace

std::string HostStanza(const DetectedHost& host) {
  std::ostringstream out;
  out << "# `sluice agent --detect` on " << host.name << ": " << Summary(host.gpus) << ".\n";
  if (host.gpus && !host.gpus->topology_error.empty()) {
    out << "# NUMA nodes and NVLink unknown: " << OneLine(host.gpus->topology_error) << "\n";
  }
  out << "hosts:\n  - name: " << host.name << "\n";
  if (host.slots > 0) {
    out << "    slots: " << host.slots;
    if (!host.cpus.empty()) out << "  # " << host.cpus;
    out << "\n";
  }
  if (host.memory_mb) out << "    resources: {mem: " << *host.memory_mb << "}\n";
  if (!host.features.arch.empty()) out << "    attributes: {arch: " << host.features.arch << "}\n";
  if (!host.features.tags.empty()) {
    out << "    tags: [";
    for (size_t i = 0; i < host.features.tags.size(); ++i) {
      out << (i > 0 ? ", " : "") << host.features.tags[i];
    }
    out << "]  # CPU features (/proc/cpuinfo)\n";
  }
  if (!host.gpus || host.gpus->devices.empty()) return out.str();
  out << "    gpus:\n";
  const GpuInventory& inventory = *host.gpus;
  for (size_t i = 0; i < inventory.devices.size(); ++i) {
    out << "      - " << Device(inventory.devices[i]);
    if (i < inventory.names.size()) out << "  # " << inventory.names[i];
    out << "\n";
  }
  return out.str();
}

std::optional<int64_t> ReadMemTotalMb(const std::string& proc) {
  std::ifstream meminfo(proc + "/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    long long kb = 0;
    if (std::sscanf(line.c_str(), "MemTotal: %lld kB", &kb) == 1) return kb / 1024;
  }
  return std::nullopt;
}

CpuFeatures ReadCpuFeatures(std::string arch, const std::string& proc) {
  CpuFeatures features{.arch = std::move(arch)};
  std::ifstream cpuinfo(proc + "/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key != "flags" && key != "Features") continue;
    std::istringstream words(line.substr(colon + 1));
    std::vector<std::string> present{std::istream_iterator<std::string>(words), {}};
    std::sort(present.begin(), present.end());
    for (const char* tag : kCpuFeatureTags) {
      if (std::binary_search(present.begin(), present.end(), std::string(tag))) {
        features.tags.push_back(tag);
      }
    }
    break;  // the first CPU's: the others' are the same on the hosts a scheduler sees
  }
  return features;
}

}  // namespace sluice::agent
