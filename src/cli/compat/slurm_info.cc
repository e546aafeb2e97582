// sinfo and `scontrol show config` (R-COMPAT-1): the cluster as Slurm describes it. A Sluice
// queue is a partition; sinfo prints one line per queue and host state.
#include <iostream>
#include <map>

#include "cli/compat/compat_commands.h"
#include "cli/compat/job_lookup.h"
#include "client/compat/options.h"
#include "client/compat/slurm_values.h"

namespace sluice::cli::compat {
namespace {

using client::compat::OptionSpec;
using client::compat::OptionStyle;
using nlohmann::json;

enum SinfoOption { kNoHeader, kFormat, kPartition };
constexpr OptionSpec kSinfoOptions[] = {
    {"-h", "--noheader", false, kNoHeader},
    {"-o", "--format", true, kFormat},
    {"-p", "--partition", true, kPartition},
};

// Slurm's word for a host: idle (no slot used), mix (some), alloc (all), drain, down.
std::string HostState(const json& host) {
  const std::string state = host.value("state", "");
  if (state == "closed" || state == "draining") return "drain";
  if (state == "unavail") return "down";
  const int64_t used = host.value("used_slots", int64_t{0});
  if (used == 0) return "idle";
  return used >= host.value("slots", int64_t{1}) ? "alloc" : "mix";
}

struct Row {
  std::string partition, avail, limit, state;
  std::vector<std::string> nodes;
};

std::string Pad(std::string text, size_t width, bool right) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

// One field of a row: %P %a %l %D %t %T %N (others empty).
std::string Field(char letter, const Row& row) {
  switch (letter) {
    case 'P':
    case 'R':
      return row.partition;
    case 'a':
      return row.avail;
    case 'l':
      return row.limit;
    case 'D':
      return std::to_string(row.nodes.size());
    case 't':
    case 'T':
      return row.state;
    case 'N':
      return client::compat::CompressHostList(row.nodes);
  }
  return "";
}

std::string Title(char letter) {
  switch (letter) {
    case 'P':
    case 'R':
      return "PARTITION";
    case 'a':
      return "AVAIL";
    case 'l':
      return "TIMELIMIT";
    case 'D':
      return "NODES";
    case 't':
    case 'T':
      return "STATE";
    case 'N':
      return "NODELIST";
  }
  return "";
}

// sinfo's `%[.]W X` format over a row; `title` prints the header instead.
std::string Format(const std::string& format, const Row* row) {
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 == format.size()) {
      out += format[i];
      continue;
    }
    size_t j = i + 1;
    const bool right = format[j] == '.';
    if (right) ++j;
    size_t width = 0;
    while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j]))) {
      width = width * 10 + static_cast<size_t>(format[j++] - '0');
    }
    if (j == format.size()) break;
    out += Pad(row ? Field(format[j], *row) : Title(format[j]), width, right);
    i = j;
  }
  return out + "\n";
}

}  // namespace

int Sinfo(Args args) {
  Result<client::compat::ParsedArgs> parsed =
      client::compat::ParseOptions(args, kSinfoOptions, OptionStyle::kGetopt, false);
  if (!parsed) {
    std::cerr << "sinfo: " << parsed.error().message() << "\n";
    return 1;
  }
  bool header = true;
  std::string format = "%9P %.5a %.10l %.6D %.6t %N";
  std::string only;
  for (const auto& option : parsed->options) {
    if (option.id == kNoHeader) header = false;
    if (option.id == kFormat) format = option.value;
    if (option.id == kPartition) only = option.value;
  }
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) {
    std::cerr << "sinfo: error: " << rest.error().message() << "\n";
    return 1;
  }
  Result<json> queues = (*rest)->Get("/v1/queues");
  Result<json> hosts = queues ? (*rest)->Get("/v1/hosts") : queues;
  if (!queues || !hosts) {
    std::cerr << "sinfo: error: " << (queues ? hosts : queues).error().message() << "\n";
    return 1;
  }
  // Every host serves every queue unless the queue names a host group (not shown here).
  std::map<std::string, std::vector<std::string>> by_state;
  for (const json& host : *hosts) by_state[HostState(host)].push_back(host.value("name", ""));
  const bool only_partitions = format == "%P" || format == "%R";
  std::string out = header ? Format(format, nullptr) : "";
  for (const json& queue : *queues) {
    const std::string name = queue.value("name", "");
    if (!only.empty() && name != only) continue;
    // Sluice's queues have no run-time limit of their own (jobs carry theirs).
    Row row{.partition = name,
            .avail = queue.value("open", true) && queue.value("active", true) ? "up" : "down",
            .limit = "infinite"};
    if (only_partitions) {
      out += Format(format, &row);
      continue;
    }
    for (const auto& [state, names] : by_state) {
      row.state = state;
      row.nodes = names;
      out += Format(format, &row);
    }
  }
  std::cout << out;
  return 0;
}

int ScontrolShowConfig() {
  // Toil reads these two to pace its polling; Sluice's cycle runs within a second of a change.
  std::cout << "Configuration data as of " << client::compat::SlurmDateTime(Now()) << "\n"
            << "AcctGatherNodeFreq      = 0 sec\n"
            << "ClusterName             = sluice\n"
            << "MinJobAge               = 300 sec\n"
            << "SchedulerTimeSlice      = 1 sec\n"
            << "SLURM_VERSION           = 22.05.8\n";
  return 0;
}

}  // namespace sluice::cli::compat
