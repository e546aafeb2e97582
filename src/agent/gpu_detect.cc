// Reads nvidia-smi's answers into GPU devices; the contract and the output formats are in
// gpu_detect.h.
#include "agent/gpu_detect.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>

#include "agent/command_output.h"

namespace sluice::agent {
namespace {

using core::kMaxGpusPerHost;

// nvidia-smi's exit status for "No devices were found" (a query that matched nothing).
constexpr int kNoDevicesFound = 6;

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// `text` with bytes outside printable ASCII as `?`, cut at `max` (messages and the names in
// comments stay valid UTF-8 and one line whatever the driver printed).
std::string Printable(std::string_view text, size_t max) {
  std::string out(text.substr(0, max));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return out;
}

std::string Quote(std::string_view text) { return "'" + Printable(text, 80) + "'"; }

bool IsNotAvailable(std::string_view value) {
  return value == "[N/A]" || value == "N/A" || value == "[Not Supported]";
}

std::optional<int64_t> WholeNumber(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

// "GPU3" -> 3; nullopt for anything else (NIC0, mlx5_0, CPU Affinity).
std::optional<int32_t> GpuLabel(std::string_view cell) {
  if (!cell.starts_with("GPU")) return std::nullopt;
  const std::optional<int64_t> index = WholeNumber(cell.substr(3));
  if (!index || *index >= kMaxGpusPerHost) return std::nullopt;
  return static_cast<int32_t>(*index);
}

// "NV12": a bonded set of NVLinks.
bool IsNvLinkCell(std::string_view cell) {
  return cell.size() > 2 && cell.starts_with("NV") && WholeNumber(cell.substr(2)).has_value();
}

// `text` without ANSI escape sequences (ESC [ parameters final-byte): some drivers underline
// the header of `topo -m` even into a pipe.
std::string WithoutEscapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b' || i + 1 >= text.size() || text[i + 1] != '[') {
      out += text[i];
      continue;
    }
    i += 2;
    while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
  }
  return out;
}

// A line of `topo -m` cut into trimmed cells: at tabs, as nvidia-smi prints it; a line without
// tabs (a copy that lost them) at blanks, keeping the affinity titles whole. The header's
// leading empty cell (above the row labels) is dropped.
std::vector<std::string> TopologyCells(std::string_view line) {
  std::vector<std::string> cells;
  if (line.find('\t') != std::string_view::npos) {
    for (std::string_view cell : Split(line, '\t')) cells.emplace_back(Trim(cell));
  } else {
    for (std::string_view word : Split(Trim(line), ' ')) {
      if (word.empty()) continue;
      const std::string last = cells.empty() ? "" : cells.back();
      if (word == "Affinity" && (last == "CPU" || last == "NUMA")) {
        cells.back() += " Affinity";
      } else if ((word == "NUMA" && last == "GPU") || (word == "ID" && last == "GPU NUMA")) {
        cells.back() += " " + std::string(word);
      } else {
        cells.emplace_back(word);
      }
    }
  }
  if (!cells.empty() && cells.front().empty()) cells.erase(cells.begin());
  return cells;
}

// The header's GPU columns (by position) and the position of `NUMA Affinity` (-1: none).
struct TopologyHeader {
  std::vector<std::pair<size_t, int32_t>> gpu_columns;
  int64_t numa_column = -1;
  size_t min_cells = 1;  // a GPU row has its label and every GPU column
};

TopologyHeader ReadTopologyHeader(const std::vector<std::string>& columns) {
  TopologyHeader header;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (std::optional<int32_t> gpu = GpuLabel(columns[i])) {
      header.gpu_columns.emplace_back(i, *gpu);
      header.min_cells = std::max(header.min_cells, i + 2);
    }
    if (columns[i] == "NUMA Affinity") header.numa_column = static_cast<int64_t>(i);
  }
  return header;
}

// One GPU row against the header. A row's cell i + 1 is under the header's column i.
Result<GpuLinks> ReadTopologyRow(const TopologyHeader& header,
                                 const std::vector<std::string>& cells, int32_t gpu,
                                 const std::string& where) {
  if (cells.size() < header.min_cells) {
    return InvalidArgument(where + "GPU" + std::to_string(gpu) + " has " +
                           std::to_string(cells.size() - 1) + " cells, expected at least " +
                           std::to_string(header.min_cells - 1));
  }
  GpuLinks links;
  for (const auto& [column, peer] : header.gpu_columns) {
    if (peer != gpu && IsNvLinkCell(cells[column + 1])) links.nvlink.push_back(peer);
  }
  std::sort(links.nvlink.begin(), links.nvlink.end());
  const size_t numa_cell = static_cast<size_t>(header.numa_column + 1);
  if (header.numa_column >= 0 && numa_cell < cells.size() && !IsNotAvailable(cells[numa_cell])) {
    const std::optional<int64_t> node = WholeNumber(cells[numa_cell]);
    if (!node || *node > 65535) {
      return InvalidArgument(where + "GPU" + std::to_string(gpu) + ": NUMA Affinity " +
                             Quote(cells[numa_cell]) + " is not a node number");
    }
    links.numa = static_cast<int32_t>(*node);
  }
  return links;
}

// Letters, digits and `._+` of `text`: a model name that needs no quoting in YAML or in a
// `gmodel=` request.
std::string ModelChars(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+') out += c;
  }
  return out;
}

// The first non-empty line of what a failed nvidia-smi printed (it explains itself on stdout:
// "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver...").
std::string FirstLine(const CommandOutput& output) {
  for (const std::string* text : {&output.out, &output.err}) {
    for (std::string_view line : Split(*text, '\n')) {
      std::string_view first = Trim(line);
      while (first.ends_with('.')) first.remove_suffix(1);  // it goes inside our message
      if (!first.empty()) return Printable(first, 200);
    }
  }
  return "(it printed nothing)";
}

Status Unavailable(std::string message) {
  return Status(StatusCode::kUnavailable, std::move(message));
}

// Step 3 of DetectGpus: the topology, or why there is none.
std::map<int32_t, GpuLinks> ReadTopology(const std::string& smi, const CommandLimits& limits,
                                         std::string& error) {
  Result<CommandOutput> topo = RunCommand({smi, "topo", "-m"}, limits);
  if (!topo) {
    error = topo.error().message();
    return {};
  }
  if (topo->exit_code != 0) {
    error = "nvidia-smi topo -m exited with status " + std::to_string(topo->exit_code) + ": " +
            FirstLine(*topo);
    return {};
  }
  Result<std::map<int32_t, GpuLinks>> links = ParseGpuTopology(topo->out);
  if (!links) {
    error = links.error().message();
    return {};
  }
  return std::move(*links);
}

}  // namespace

Result<std::vector<QueriedGpu>> ParseGpuQuery(std::string_view output) {
  std::vector<QueriedGpu> gpus;
  std::set<int32_t> seen;
  const std::vector<std::string_view> lines = Split(output, '\n');
  for (size_t n = 0; n < lines.size(); ++n) {
    if (Trim(lines[n]).empty()) continue;
    const std::string where = "nvidia-smi --query-gpu: line " + std::to_string(n + 1) + ": ";
    const std::vector<std::string_view> fields = Split(lines[n], ',');
    if (fields.size() < 4) {
      return InvalidArgument(where + "expected index, uuid, name, memory.total; got " +
                             Quote(Trim(lines[n])));
    }
    QueriedGpu gpu;
    const std::optional<int64_t> index = WholeNumber(Trim(fields[0]));
    if (!index || *index >= kMaxGpusPerHost) {
      return InvalidArgument(where + "index " + Quote(Trim(fields[0])) + " is not 0-63");
    }
    gpu.index = static_cast<int32_t>(*index);
    const std::string_view uuid = Trim(fields[1]);
    if (!IsNotAvailable(uuid)) gpu.uuid = Printable(uuid, 128);
    // A name with a comma in it: everything between the uuid and the memory.
    const size_t name_begin = lines[n].find(',', lines[n].find(',') + 1) + 1;
    const size_t name_end = lines[n].rfind(',');
    gpu.name = std::string(Trim(lines[n].substr(name_begin, name_end - name_begin)));
    if (gpu.name.empty())
      return InvalidArgument(where + "GPU " + std::to_string(*index) + " has no name");
    const std::string_view memory = Trim(fields.back());
    if (!IsNotAvailable(memory)) {
      const std::optional<int64_t> mb = WholeNumber(memory);
      if (!mb) return InvalidArgument(where + "memory.total " + Quote(memory) + " is not MiB");
      gpu.memory_mb = *mb;
    }
    if (!seen.insert(gpu.index).second) {
      return InvalidArgument(where + "GPU " + std::to_string(gpu.index) + " listed twice");
    }
    if (gpus.size() == static_cast<size_t>(kMaxGpusPerHost)) {
      return InvalidArgument(where + "more than " + std::to_string(kMaxGpusPerHost) + " GPUs");
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

// Steps: 1. without escapes, find the header (the first line with a GPU0 cell); 2. read each
// GPU row under it (ReadTopologyRow) until the legend; other rows (NICs) are skipped.
Result<std::map<int32_t, GpuLinks>> ParseGpuTopology(std::string_view output) {
  const std::string text = WithoutEscapes(output);
  const std::vector<std::string_view> lines = Split(text, '\n');
  std::optional<TopologyHeader> header;
  std::map<int32_t, GpuLinks> out;
  for (size_t n = 0; n < lines.size(); ++n) {
    if (Trim(lines[n]).starts_with("Legend")) break;
    const std::vector<std::string> cells = TopologyCells(lines[n]);
    if (!header) {
      if (std::find(cells.begin(), cells.end(), "GPU0") != cells.end()) {
        header = ReadTopologyHeader(cells);
      }
      continue;
    }
    const std::optional<int32_t> gpu = cells.empty() ? std::nullopt : GpuLabel(cells.front());
    if (!gpu) continue;
    const std::string where = "nvidia-smi topo -m: line " + std::to_string(n + 1) + ": ";
    Result<GpuLinks> links = ReadTopologyRow(*header, cells, *gpu, where);
    if (!links) return links.error();
    if (!out.emplace(*gpu, std::move(*links)).second) {
      return InvalidArgument(where + "GPU" + std::to_string(*gpu) + " listed twice");
    }
  }
  if (!header) return InvalidArgument("nvidia-smi topo -m: no header line with GPU0");
  return out;
}

std::string ShortGpuModel(std::string_view name) {
  std::vector<std::string_view> words;
  for (std::string_view word : Split(Trim(name), ' ')) {
    if (!word.empty()) words.push_back(word);
  }
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i].substr(0, words[i].find('-'));
    if (std::none_of(word.begin(), word.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      continue;
    }
    // "RTX 4090": the number alone would not say which kind of card it is.
    std::string model = std::isdigit(static_cast<unsigned char>(word.front())) && i > 0
                            ? ModelChars(words[i - 1]) + ModelChars(word)
                            : ModelChars(word);
    if (!model.empty()) return model;
  }
  std::string joined;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i == 0 && words.size() > 1 && words[0] == "NVIDIA") continue;
    joined += ModelChars(words[i]);
  }
  return joined;
}

std::vector<core::GpuDevice> GpuDevicesOf(const std::vector<QueriedGpu>& gpus,
                                          const std::map<int32_t, GpuLinks>& topology) {
  std::map<int32_t, core::GpuDevice> devices;
  for (const QueriedGpu& gpu : gpus) {
    devices[gpu.index] = core::GpuDevice{.index = gpu.index,
                                         .model = ShortGpuModel(gpu.name),
                                         .memory_mb = gpu.memory_mb,
                                         .uuid = gpu.uuid,
                                         .path = "/dev/nvidia" + std::to_string(gpu.index)};
  }
  std::map<int32_t, std::set<int32_t>> peers;
  for (auto& [index, device] : devices) {
    auto links = topology.find(index);
    if (links == topology.end()) continue;
    device.numa = links->second.numa;
    for (int32_t peer : links->second.nvlink) {
      if (peer == index || !devices.contains(peer)) continue;
      peers[index].insert(peer);
      peers[peer].insert(index);
    }
  }
  std::vector<core::GpuDevice> out;
  for (auto& [index, device] : devices) {
    device.nvlink.assign(peers[index].begin(), peers[index].end());
    out.push_back(std::move(device));
  }
  return out;
}

Result<GpuInventory> DetectGpus(const DetectOptions& options) {
  GpuInventory inventory;
  // 1. No nvidia-smi: a host without NVIDIA GPUs, which is not an error.
  const std::optional<std::string> smi = FindOnPath("nvidia-smi", options.search_path);
  if (!smi) return inventory;
  inventory.nvidia_smi = true;
  // 2. The GPUs.
  const CommandLimits limits{.timeout = options.timeout};
  Result<CommandOutput> query = RunCommand(
      {*smi, "--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader,nounits"}, limits);
  if (!query) return query.error();
  if (query->exit_code == kNoDevicesFound) return inventory;
  if (query->exit_code != 0) {
    return Unavailable(*smi + " exited with status " + std::to_string(query->exit_code) + ": " +
                       FirstLine(*query));
  }
  Result<std::vector<QueriedGpu>> gpus = ParseGpuQuery(query->out);
  if (!gpus) return gpus.error();
  if (gpus->empty()) return inventory;
  // 3. How they are linked; without it they are still usable.
  const std::map<int32_t, GpuLinks> topology = ReadTopology(*smi, limits, inventory.topology_error);
  // 4. Devices, with their full names in the same (index) order.
  inventory.devices = GpuDevicesOf(*gpus, topology);
  for (const core::GpuDevice& device : inventory.devices) {
    for (const QueriedGpu& gpu : *gpus) {
      if (gpu.index == device.index) inventory.names.push_back(Printable(gpu.name, 128));
    }
  }
  return inventory;
}

wire::GpuReport GpuReportOf(const Result<GpuInventory>& detected) {
  if (!detected) {
    return {.probe = wire::GpuProbe::kFailed, .error = Printable(detected.error().message(), 1024)};
  }
  if (!detected->nvidia_smi) return {.probe = wire::GpuProbe::kNoNvidiaSmi};
  return {.probe = wire::GpuProbe::kNvidiaSmi, .devices = detected->devices};
}

}  // namespace sluice::agent
