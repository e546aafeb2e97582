#include "wire/gpu_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "wire/json_fields.h"

namespace sluice::wire {
namespace {

using fields::AsInt64;
using fields::CheckFields;
using fields::Find;
using fields::IsNonNegativeInt;
using fields::ReadString;
using fields::TypeError;
using nlohmann::json;

constexpr std::pair<GpuProbe, std::string_view> kGpuProbeNames[] = {
    {GpuProbe::kNvidiaSmi, "nvidia-smi"},
    {GpuProbe::kNoNvidiaSmi, "none"},
    {GpuProbe::kFailed, "failed"}};

// A model a `gmodel="..."` can name: the request language's strings have no escapes.
bool IsGpuModel(const std::string& text) {
  return !text.empty() && text.size() <= 64 && std::none_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"' || c == '\'';
  });
}

Status ReadGpuIndex(const json& value, const std::string& where, int32_t& out) {
  if (!IsNonNegativeInt(value, core::kMaxGpusPerHost - 1)) {
    return TypeError(where, "a GPU index 0-63");
  }
  out = value.get<int32_t>();
  return Status::Ok();
}

// Everything but the index and the NVLink peers, which DecodeGpuDevice reads.
Status ReadGpuValues(const json& entry, const std::string& where, core::GpuDevice& d) {
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "model", where, d.model));
  if (!d.model.empty() && !IsGpuModel(d.model)) {
    return TypeError(where + "model", "a name of at most 64 characters without quotes");
  }
  if (const json* memory = Find(entry, "memory_mb")) {
    if (!IsNonNegativeInt(*memory, int64_t{1} << 40)) return TypeError(where + "memory_mb", "MB");
    d.memory_mb = memory->get<int64_t>();
  }
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "uuid", where, d.uuid));
  if (d.uuid.size() > 128) return TypeError(where + "uuid", "at most 128 characters");
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "path", where, d.path));
  if (!d.path.empty() && (d.path.front() != '/' || d.path.size() > 255)) {
    return TypeError(where + "path", "an absolute path");
  }
  if (const json* numa = Find(entry, "numa")) {
    int64_t node = 0;
    if (!AsInt64(*numa, node) || node < -1 || node > 65535) {
      return TypeError(where + "numa", "a NUMA node (-1: unknown)");
    }
    d.numa = static_cast<int32_t>(node);
  }
  return Status::Ok();
}

Result<core::GpuDevice> DecodeGpuDevice(const json& entry, const std::string& where) {
  static const std::set<std::string> kFields = {"index", "model", "memory_mb", "uuid",
                                                "path",  "numa",  "nvlink"};
  if (!entry.is_object()) return TypeError(where, "an object");
  SLUICE_RETURN_IF_ERROR(CheckFields(entry, kFields, where + "."));
  core::GpuDevice d;
  const json* index = Find(entry, "index");
  if (index == nullptr) return TypeError(where + ".index", "a GPU index 0-63");
  SLUICE_RETURN_IF_ERROR(ReadGpuIndex(*index, where + ".index", d.index));
  SLUICE_RETURN_IF_ERROR(ReadGpuValues(entry, where + ".", d));
  if (const json* peers = Find(entry, "nvlink")) {
    if (!peers->is_array() || peers->size() > core::kMaxGpusPerHost) {
      return TypeError(where + ".nvlink", "a list of GPU indexes");
    }
    d.nvlink.resize(peers->size());
    for (size_t i = 0; i < peers->size(); ++i) {
      SLUICE_RETURN_IF_ERROR(ReadGpuIndex((*peers)[i], where + ".nvlink", d.nvlink[i]));
    }
  }
  return d;
}

// Each NVLink peer is another listed device; then both sides list each other, sorted (the
// core takes the links as the YAML makes them).
Status LinkGpuPeers(std::map<int32_t, core::GpuDevice>& devices, const std::string& where) {
  std::map<int32_t, std::set<int32_t>> peers;
  for (const auto& [index, device] : devices) {
    for (int32_t peer : device.nvlink) {
      if (peer == index || !devices.contains(peer)) {
        return TypeError(where + ": GPU " + std::to_string(index) + ": nvlink",
                         "indexes of the other GPUs listed");
      }
      peers[index].insert(peer);
      peers[peer].insert(index);
    }
  }
  for (auto& [index, device] : devices) {
    device.nvlink.assign(peers[index].begin(), peers[index].end());
  }
  return Status::Ok();
}

}  // namespace

std::string_view ToString(GpuProbe probe) {
  for (const auto& [value, name] : kGpuProbeNames) {
    if (value == probe) return name;
  }
  return "none";
}

json EncodeGpuDevices(const std::vector<core::GpuDevice>& gpus) {
  json devices = json::array();
  for (const core::GpuDevice& d : gpus) {
    json entry = {{"index", d.index}};
    if (!d.model.empty()) entry["model"] = d.model;
    if (d.memory_mb > 0) entry["memory_mb"] = d.memory_mb;
    if (!d.uuid.empty()) entry["uuid"] = d.uuid;
    if (!d.path.empty()) entry["path"] = d.path;
    if (d.numa >= 0) entry["numa"] = d.numa;
    if (!d.nvlink.empty()) entry["nvlink"] = d.nvlink;
    devices.push_back(std::move(entry));
  }
  return devices;
}

Result<std::vector<core::GpuDevice>> DecodeGpuDevices(const json& list, const std::string& where) {
  if (!list.is_array() || list.size() > core::kMaxGpusPerHost) {
    return TypeError(where, "a list of at most 64 GPUs");
  }
  std::map<int32_t, core::GpuDevice> by_index;  // sorted, as HostSpec::gpus wants
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    Result<core::GpuDevice> device = DecodeGpuDevice(list[i], at);
    if (!device) return device.error();
    const int32_t index = device->index;
    if (!by_index.emplace(index, std::move(*device)).second) {
      return InvalidArgument(at + ".index: GPU " + std::to_string(index) + " listed twice");
    }
  }
  SLUICE_RETURN_IF_ERROR(LinkGpuPeers(by_index, where));
  std::vector<core::GpuDevice> devices;
  for (auto& [index, device] : by_index) devices.push_back(std::move(device));
  return devices;
}

json EncodeGpuReport(const GpuReport& report) {
  json out = {{"probe", ToString(report.probe)}, {"devices", EncodeGpuDevices(report.devices)}};
  if (!report.error.empty()) out["error"] = report.error;
  return out;
}

Result<GpuReport> DecodeGpuReport(const json& gpus) {
  if (!gpus.is_object()) return TypeError("gpus", "an object");
  SLUICE_RETURN_IF_ERROR(CheckFields(gpus, {"probe", "devices", "error"}, "gpus."));
  GpuReport report;
  std::string probe;
  SLUICE_RETURN_IF_ERROR(ReadString(gpus, "probe", "gpus.", probe));
  const auto* named = std::find_if(std::begin(kGpuProbeNames), std::end(kGpuProbeNames),
                                   [&](const auto& entry) { return entry.second == probe; });
  if (named == std::end(kGpuProbeNames)) {
    return TypeError("gpus.probe", "nvidia-smi, none or failed");
  }
  report.probe = named->first;
  SLUICE_RETURN_IF_ERROR(ReadString(gpus, "error", "gpus.", report.error));
  if (report.error.size() > 1024) return TypeError("gpus.error", "at most 1024 characters");
  const json* devices = Find(gpus, "devices");
  if (devices == nullptr) return report;
  Result<std::vector<core::GpuDevice>> decoded = DecodeGpuDevices(*devices, "gpus.devices");
  if (!decoded) return decoded.error();
  if (!decoded->empty() && report.probe != GpuProbe::kNvidiaSmi) {
    return TypeError("gpus.devices", "none unless the probe is nvidia-smi");
  }
  report.devices = std::move(*decoded);
  return report;
}

}  // namespace sluice::wire
