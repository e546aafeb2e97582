// Reads a host entry's `gpus:` key and its siblings; the contract is in gpu_yaml.h.
#include "config/gpu_yaml.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "base/memory_units.h"

namespace sluice::config::yaml {
namespace {

using core::GpuDevice;
using core::HostSpec;
using core::kMaxGpusPerHost;

// The GPU keys of one host entry, and `resources` (its `gpu` is checked against them).
struct GpuKeys {
  const Entry* gpus = nullptr;
  const Entry* model = nullptr;
  const Entry* memory = nullptr;
  const Entry* resources = nullptr;
};

// A device being read, with where its index and NVLink peers were written, for errors that
// can only be found once every device of the host is known.
struct DeviceDraft {
  GpuDevice device;
  std::optional<Field> index_at;  // its `index`
  std::vector<Field> peers_at;    // its `nvlink` items, in the order of device.nvlink
};

// The megabytes of a unit letter as the resource request language reads them (K, M, G, T);
// nullopt for any other.
std::optional<double> UnitMegabytes(std::string_view unit) {
  if (unit.empty()) return 1;  // bare numbers are MB, LSF's default unit
  if (unit.size() > 2 || (unit.size() == 2 && unit[1] != 'B' && unit[1] != 'b')) {
    return std::nullopt;
  }
  const double scale = MegabytesPerUnit(unit[0]);
  if (scale == 0) return std::nullopt;
  return scale;
}

// A device's memory in whole MB (rounded up): `40960`, `40G`, `512M`, `1.5GB`.
Result<int64_t> ReadMemoryMb(const Reader& r, const Field& f) {
  constexpr std::string_view kWhat = "a size in MB or with a unit K, M, G or T (40960, 40G)";
  if (!f.node.IsScalar()) return r.Expected(f, kWhat);
  const std::string& text = f.node.Scalar();
  const size_t digits = text.find_first_not_of("0123456789.");
  const std::string_view number = std::string_view(text).substr(0, digits);
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value,
                                         std::chars_format::fixed);
  const std::optional<double> scale =
      UnitMegabytes(digits == std::string::npos ? "" : std::string_view(text).substr(digits));
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !scale) {
    return r.Expected(f, kWhat);
  }
  const double megabytes = std::ceil(value * *scale);
  if (!std::isfinite(megabytes) || megabytes > 1e15)
    return r.Error(f, Quote(text) + " is out of range");
  return static_cast<int64_t>(megabytes);
}

// A model name: any text, but without quotes or control characters, so that a `gmodel=`
// request can always quote it (the request language's strings have no escapes).
Result<std::string> ReadModel(const Reader& r, const Field& f) {
  if (!f.node.IsScalar()) return r.Expected(f, "a model name");
  const std::string& text = f.node.Scalar();
  const bool bad = std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"' || c == '\'';
  });
  if (text.empty() || bad) return r.Expected(f, "a model name without quotes");
  return text;
}

Result<int32_t> ReadIndex(const Reader& r, const Field& f) {
  Result<int32_t> index = r.ReadInt<int32_t>(f, 0);
  if (index && *index >= kMaxGpusPerHost) {
    return r.Error(f, std::to_string(*index) + " > " + std::to_string(kMaxGpusPerHost - 1) +
                          " (a host has at most " + std::to_string(kMaxGpusPerHost) + " GPUs)");
  }
  return index;
}

Status ReadPeers(const Reader& r, const Field& f, DeviceDraft& draft) {
  if (!f.node.IsSequence()) return r.Expected(f, "a list of GPU indexes");
  Result<std::vector<Field>> items = r.ListItems(f);
  if (!items) return items.error();
  for (const Field& item : *items) {
    Result<int32_t> peer = ReadIndex(r, item);
    if (!peer) return peer.error();
    if (std::find(draft.device.nvlink.begin(), draft.device.nvlink.end(), *peer) !=
        draft.device.nvlink.end()) {
      return r.Error(item, "peer " + std::to_string(*peer) + " listed twice");
    }
    draft.device.nvlink.push_back(*peer);
    draft.peers_at.push_back(item);
  }
  return Status::Ok();
}

Status ReadDeviceKey(const Reader& r, const Entry& e, DeviceDraft& draft) {
  const Field& f = e.value;
  GpuDevice& d = draft.device;
  if (e.key == "index") {
    draft.index_at = f;
    return Assign(ReadIndex(r, f), d.index);
  }
  if (e.key == "model") return Assign(ReadModel(r, f), d.model);
  if (e.key == "memory") return Assign(ReadMemoryMb(r, f), d.memory_mb);
  if (e.key == "uuid") return Assign(r.ReadName(f), d.uuid);
  if (e.key == "numa") return Assign(r.ReadInt<int32_t>(f, 0), d.numa);
  if (e.key == "nvlink") return ReadPeers(r, f, draft);
  if (e.key == "path") {
    SLUICE_RETURN_IF_ERROR(Assign(r.ReadName(f), d.path));
    return d.path.front() == '/' ? Status::Ok() : r.Expected(f, "an absolute path");
  }
  return r.Error(e.key_line, f.path,
                 "unknown key (a GPU has index, model, memory, uuid, path, numa, nvlink)");
}

Result<DeviceDraft> ReadDevice(const Reader& r, const Field& f) {
  if (!f.node.IsMap()) return r.Expected(f, "a map of GPU settings");
  Result<std::vector<Entry>> entries = r.MapEntries(f);
  if (!entries) return entries.error();
  DeviceDraft draft;
  for (const Entry& e : *entries) SLUICE_RETURN_IF_ERROR(ReadDeviceKey(r, e, draft));
  if (!draft.index_at) return r.Error(f, "missing required key 'index'");
  return draft;
}

// Steps: 1. read each device (ReadDevice); 2. check the indexes are unique; 3. check each
// NVLink peer is another device of the host; 4. make the links symmetric and sort them.
Result<std::vector<GpuDevice>> ReadDeviceList(const Reader& r, const Field& f) {
  Result<std::vector<Field>> items = r.ListItems(f);
  if (!items) return items.error();
  std::vector<DeviceDraft> drafts;
  std::map<int32_t, int> index_lines;  // index -> line of its first device
  for (const Field& item : *items) {
    Result<DeviceDraft> draft = ReadDevice(r, item);
    if (!draft) return draft.error();
    const auto [it, inserted] = index_lines.emplace(draft->device.index, draft->index_at->line);
    if (!inserted) {
      return r.Error(*draft->index_at, "duplicate GPU index " + std::to_string(it->first) +
                                           " (first on line " + std::to_string(it->second) + ")");
    }
    drafts.push_back(std::move(*draft));
  }
  std::map<int32_t, GpuDevice> devices;  // by index: sorted, as HostSpec::gpus wants
  for (const DeviceDraft& draft : drafts) {
    const GpuDevice& d = draft.device;
    for (size_t i = 0; i < d.nvlink.size(); ++i) {
      const int32_t peer = d.nvlink[i];
      if (peer == d.index) return r.Error(draft.peers_at[i], "a GPU is not its own NVLink peer");
      if (!index_lines.contains(peer)) {
        return r.Error(draft.peers_at[i],
                       "no GPU with index " + std::to_string(peer) + " on this host");
      }
    }
    devices.emplace(d.index, d);
  }
  for (const DeviceDraft& draft : drafts) {
    for (int32_t peer : draft.device.nvlink) devices[peer].nvlink.push_back(draft.device.index);
  }
  std::vector<GpuDevice> out;
  for (auto& [index, device] : devices) {
    std::sort(device.nvlink.begin(), device.nvlink.end());
    device.nvlink.erase(std::unique(device.nvlink.begin(), device.nvlink.end()),
                        device.nvlink.end());
    out.push_back(std::move(device));
  }
  return out;
}

// `gpus: N` with the optional gpu_model and gpu_memory: N devices 0..N-1 alike.
Result<std::vector<GpuDevice>> ReadCountForm(const Reader& r, const GpuKeys& keys) {
  const Field& f = keys.gpus->value;
  Result<int32_t> count = r.ReadInt<int32_t>(f, 0);
  if (!count) return count.error();
  if (*count > kMaxGpusPerHost) {
    return r.Error(f, std::to_string(*count) + " > " + std::to_string(kMaxGpusPerHost) +
                          " (at most " + std::to_string(kMaxGpusPerHost) + " GPUs per host)");
  }
  GpuDevice model;
  if (keys.model) SLUICE_RETURN_IF_ERROR(Assign(ReadModel(r, keys.model->value), model.model));
  if (keys.memory) {
    SLUICE_RETURN_IF_ERROR(Assign(ReadMemoryMb(r, keys.memory->value), model.memory_mb));
  }
  std::vector<GpuDevice> out(static_cast<size_t>(*count), model);
  for (int32_t i = 0; i < *count; ++i) out[static_cast<size_t>(i)].index = i;
  return out;
}

// `resources: {gpu: N}` beside `gpus:`: equal to the device count, and not with `auto`.
Status CheckGpuResource(const Reader& r, const GpuKeys& keys, const HostSpec& spec) {
  const auto count = spec.resources.find("gpu");
  if (count == spec.resources.end() || keys.resources == nullptr) return Status::Ok();
  Result<std::vector<Entry>> resources = r.MapEntries(keys.resources->value);
  if (!resources) return resources.error();
  const auto gpu = std::find_if(resources->begin(), resources->end(),
                                [](const Entry& e) { return e.key == "gpu"; });
  if (gpu == resources->end()) return Status::Ok();
  const std::string gpus_line = std::to_string(keys.gpus->key_line);
  if (spec.gpus_auto) {
    return r.Error(gpu->value, "not allowed with `gpus: auto` on line " + gpus_line +
                                   " (the agent counts the GPUs)");
  }
  if (count->second != static_cast<int64_t>(spec.gpus.size())) {
    return r.Error(gpu->value, std::to_string(count->second) + " differs from the " +
                                   std::to_string(spec.gpus.size()) + " GPUs of `gpus` on line " +
                                   gpus_line);
  }
  return Status::Ok();
}

}  // namespace

bool IsHostGpuKey(std::string_view key) {
  return key == "gpus" || key == "gpu_model" || key == "gpu_memory";
}

// Steps: 1. find the keys; 2. read `gpus:` by its form (list, auto or count); 3. refuse
// gpu_model and gpu_memory outside the count form; 4. check resources.gpu (CheckGpuResource)
// and set it to the device count.
Status ReadHostGpus(const Reader& r, const std::vector<Entry>& entries, HostSpec& spec) {
  GpuKeys keys;
  for (const Entry& e : entries) {
    if (e.key == "gpus") keys.gpus = &e;
    if (e.key == "gpu_model") keys.model = &e;
    if (e.key == "gpu_memory") keys.memory = &e;
    if (e.key == "resources") keys.resources = &e;
  }
  const Field* gpus = keys.gpus ? &keys.gpus->value : nullptr;
  // A count is plain digits; anything else that is not `auto` or a list is refused as such.
  const bool is_count = gpus && gpus->node.IsScalar() && !IsStringTagged(gpus->node) &&
                        !gpus->node.Scalar().empty() &&
                        gpus->node.Scalar().find_first_not_of("0123456789") == std::string::npos;
  if (gpus == nullptr) {
    // nothing to read; a lone gpu_model or gpu_memory is refused below
  } else if (gpus->node.IsSequence()) {
    SLUICE_RETURN_IF_ERROR(Assign(ReadDeviceList(r, *gpus), spec.gpus));
  } else if (gpus->node.IsScalar() && gpus->node.Scalar() == "auto") {
    spec.gpus_auto = true;
  } else if (is_count) {
    SLUICE_RETURN_IF_ERROR(Assign(ReadCountForm(r, keys), spec.gpus));
  } else {
    return r.Expected(*gpus, "a GPU count, auto or a list of GPUs");
  }
  for (const Entry* sibling : {keys.model, keys.memory}) {
    if (sibling != nullptr && !is_count) {
      return r.Error(sibling->key_line, sibling->value.path,
                     "only with a GPU count `gpus: N` (a list of GPUs sets each one's own)");
    }
  }
  if (gpus == nullptr) return Status::Ok();
  SLUICE_RETURN_IF_ERROR(CheckGpuResource(r, keys, spec));
  if (!spec.gpus_auto) spec.resources["gpu"] = static_cast<int64_t>(spec.gpus.size());
  return Status::Ok();
}

size_t GpuCost(const std::vector<core::GpuDevice>& gpus) {
  size_t cost = 0;
  for (const GpuDevice& gpu : gpus) cost += 1 + gpu.nvlink.size();
  return cost;
}

}  // namespace sluice::config::yaml
