#include "server/job_variables.h"

#include <optional>

namespace sluice::server {
namespace {

// `name` as a prefix and a trailing number (its digits' text), or no number.
struct Split {
  std::string prefix;
  std::string digits;
};

Split SplitNumber(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  if (end == name.size() || name.size() - end > 18) return Split{name, ""};
  return Split{name.substr(0, end), name.substr(end)};
}

}  // namespace

std::string CompressedHostList(const std::vector<std::string>& names) {
  std::string out;
  size_t i = 0;
  while (i < names.size()) {
    const Split first = SplitNumber(names[i]);
    size_t j = i + 1;
    if (!first.digits.empty()) {
      int64_t last = std::stoll(first.digits);
      while (j < names.size()) {
        const Split next = SplitNumber(names[j]);
        if (next.prefix != first.prefix || next.digits.size() != first.digits.size() ||
            std::stoll(next.digits) != last + 1) {
          break;
        }
        ++last;
        ++j;
      }
    }
    if (!out.empty()) out += ',';
    if (j - i == 1) {
      out += names[i];
    } else {
      out += first.prefix + "[" + first.digits + "-" + SplitNumber(names[j - 1]).digits + "]";
    }
    i = j;
  }
  return out;
}

std::string TasksPerNode(const std::vector<int32_t>& counts) {
  std::string out;
  size_t i = 0;
  while (i < counts.size()) {
    size_t j = i;
    while (j < counts.size() && counts[j] == counts[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(counts[i]);
    if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

std::map<std::string, std::string> JobVariables(const JobVariablesInput& job) {
  std::vector<std::string> names;
  std::vector<int32_t> slots;
  std::string sluice_hosts, lsb_hosts, lsb_mcpu_hosts;
  int32_t tasks = 0;
  for (const auto& [name, count] : job.hosts) {
    names.push_back(name);
    slots.push_back(count);
    tasks += count;
    sluice_hosts += (sluice_hosts.empty() ? "" : ",") + name + ":" + std::to_string(count);
    lsb_mcpu_hosts += (lsb_mcpu_hosts.empty() ? "" : " ") + name + " " + std::to_string(count);
    for (int32_t k = 0; k < count; ++k) lsb_hosts += (lsb_hosts.empty() ? "" : " ") + name;
  }
  const std::string id = std::to_string(job.id);
  const std::string ntasks = std::to_string(tasks);
  const std::string nodes = std::to_string(job.hosts.size());
  const std::string nodelist = CompressedHostList(names);
  const std::string per_node = TasksPerNode(slots);
  std::map<std::string, std::string> v = {
      {"SLUICE_JOB_ID", id},          {"SLUICE_NTASKS", ntasks},
      {"SLUICE_HOSTS", sluice_hosts}, {"SLUICE_QUEUE", job.queue},
      {"SLUICE_JOB_NAME", job.name},  {"SLUICE_SUBMIT_DIR", job.cwd},
      {"SLURM_JOB_ID", id},           {"SLURM_JOBID", id},
      {"SLURM_JOB_NAME", job.name},   {"SLURM_JOB_PARTITION", job.queue},
      {"SLURM_JOB_USER", job.user},   {"SLURM_NTASKS", ntasks},
      {"SLURM_NPROCS", ntasks},       {"SLURM_NNODES", nodes},
      {"SLURM_JOB_NUM_NODES", nodes}, {"SLURM_NODELIST", nodelist},
      {"SLURM_JOB_NODELIST", nodelist}, {"SLURM_TASKS_PER_NODE", per_node},
      {"SLURM_JOB_CPUS_PER_NODE", per_node}, {"SLURM_CPUS_PER_TASK", "1"},
      {"SLURM_SUBMIT_DIR", job.cwd},  {"SLURM_NODEID", "0"},
      {"SLURM_PROCID", "0"},          {"SLURM_LOCALID", "0"},
      {"LSB_JOBID", id},              {"LSB_JOBINDEX", "0"},
      {"LSB_JOBNAME", job.name},      {"LSB_QUEUE", job.queue},
      {"LSB_HOSTS", lsb_hosts},       {"LSB_MCPU_HOSTS", lsb_mcpu_hosts},
      {"LS_SUBCWD", job.cwd},
  };
  if (job.array_index) {
    const std::string index = std::to_string(*job.array_index);
    v["SLUICE_ARRAY_ID"] = id;
    v["SLUICE_ARRAY_INDEX"] = index;
    v["SLURM_ARRAY_JOB_ID"] = id;
    v["SLURM_ARRAY_TASK_ID"] = index;
    v["LSB_JOBINDEX"] = index;
  }
  return v;
}

}  // namespace sluice::server
