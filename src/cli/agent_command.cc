// `sluice agent --name H --server URL --token T [--slots N] [--resources mem=..,gpu=..]
// [--attributes type=linux] [--tags a,b] [--work-dir DIR] [--cgroup auto|v2|v1|none]
// [--cgroup-root DIR] [--cgroup-path P] [--pids-limit N] [--allow-root-jobs] [--state-dir DIR]`:
// runs one host's agent until SIGTERM or SIGINT (R-SRV-3); its batch jobs outlive it for the
// next agent to adopt unless --kill-jobs-on-stop (issue 43, agent/job_shepherd.h).
// --server/--token default to SLUICE_SERVER and SLUICE_TOKEN.
// Jobs run as their accounts (R-SEC-1; uid 0 only with --allow-root-jobs), each in a cgroup
// under <cgroup-root>/[<controller>/]sluice/<name> (R-SEC-3; `none`: process groups only).
// Without a token the agent sends MUNGE credentials (as root: the agent role, R-SEC-2) via
// --munge-socket / SLUICE_MUNGE_SOCKET / /run/munge/munge.socket.2; --ca-file / SLUICE_CA_FILE
// verify an https:// controller.
// A name configured in the cluster YAML keeps its configured spec; the flags describe a host
// the controller does not know yet. Several agents may run on one machine under different
// names. Exit codes: 0 stopped by a signal, 1 the controller refused the token, 2 bad flags
// or the requested cgroup layout is missing or unusable, or the state directory is unsafe or
// used by another agent.
// At start the agent looks for the host's GPUs with the nvidia-smi on its PATH (R-GPU-1,
// agent/gpu_detect.h) and sends them with each registration: the controller gives them to a
// `gpus: auto` host and closes a host configured with other GPUs. `sluice agent --detect
// [--name H]` prints the host's stanza for the cluster YAML (CPUs, memory, the GPUs) and exits:
// 0, or 1 when nvidia-smi failed.
// Under systemd the agent speaks the notify protocol (agent/agent.h, docs/systemd.md).
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "agent/agent.h"
#include "agent/cgroup.h"
#include "agent/cpu_topology.h"
#include "agent/gpu_detect.h"
#include "agent/host_stanza.h"
#include "agent/process_image.h"
#include "agent/virtual_agent.h"
#include "auth/munge.h"
#include "cli/commands.h"
#include "cli/log_flags.h"
#include "config/cluster_yaml.h"
#include "daemon/service_notifier.h"
#include "wire/leader_follow.h"

namespace sluice::cli {
namespace {

std::atomic<bool> g_agent_stop{false};  // set from the signal handler

void OnStopSignal(int) { g_agent_stop = true; }

struct AgentFlags {
  std::string name;
  std::string server;
  std::string token;
  std::string token_file;
  int slots = 0;
  std::string resources;
  std::string attributes;
  std::vector<std::string> tags;
  std::string work_dir;
  std::string job_tmpdir;  // empty: jobs keep their TMPDIR
  std::string state_dir;  // empty: DefaultStateDir
  std::string munge_socket;
  std::string ca_file;
  int fence_grace_ms = 1000;
  LogFlags log;
  std::string cgroup = "auto";
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string cgroup_path;  // empty: agent::DefaultCgroupPath
  int64_t pids_limit = 0;   // 0: none
  bool bind_cpus = false;   // --bind-cpus: a whole core per slot (cpu_binding.h)
  bool allow_root_jobs = false;
  bool kill_jobs_on_stop = false;  // issue 43: else batch jobs outlive a stopped agent
  std::string virtual_range;  // --virtual: names of virtual hosts (virtual_agent.h)
  int virtual_connections = 8;
  int virtual_gap_ms = 50;
  bool detect = false;  // --detect: print the host's stanza and exit
};

std::string FileMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%03o", static_cast<unsigned>(mode & 0777));
  return text;
}

// The agent's credential (issue 48: no secret of the agent is reachable from a job): from
// --token-file (a file only its owner may read, as munged's key), else --token, else
// SLUICE_TOKEN. Whichever it came from, it is then overwritten where other processes could read
// it — the argv area (/proc/PID/cmdline, world-readable) and the environment block — and it is
// not in the environment the agent's children (shepherds, jobs) inherit.
Result<std::string> AgentToken(const AgentFlags& flags) {
  std::string from_env = agent::TakeFromEnvironment("SLUICE_TOKEN");
  agent::ConcealInArgv(flags.token);
  if (!flags.token_file.empty()) {
    struct stat st {};
    if (stat(flags.token_file.c_str(), &st) != 0) {
      return InvalidArgument("--token-file " + flags.token_file + ": " + std::strerror(errno));
    }
    if ((st.st_mode & 077) != 0) {
      return InvalidArgument("--token-file " + flags.token_file + ": readable by others (mode " +
                             FileMode(st.st_mode) + "); chmod 600 it");
    }
    std::ifstream in(flags.token_file);
    std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    if (token.empty()) return InvalidArgument("--token-file " + flags.token_file + ": empty");
    return token;
  }
  if (!flags.token.empty()) return flags.token;
  return from_env;
}

std::string FromEnv(const std::string& flag, const char* variable) {
  if (!flag.empty()) return flag;
  const char* value = std::getenv(variable);
  return value != nullptr ? value : "";
}

// The journal's directory when --state-dir is not given: next to the work directory (each
// agent of a test or a demo has its own), else /var/lib/sluice/agent-NAME as root, else under
// the agent account's home.
std::string DefaultStateDir(const AgentFlags& flags) {
  if (!flags.work_dir.empty()) return flags.work_dir + "/.sluice-agent-" + flags.name;
  if (geteuid() == 0) return "/var/lib/sluice/agent-" + flags.name;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : "/tmp") +
         "/.local/state/sluice/agent-" + flags.name;
}

// `--server` (or SLUICE_SERVER) as the controller client needs it: an HTTP library given another
// scheme throws (an agent given ftp:// died of it). The error names the flag.
Status CheckServerFlag(const std::string& server) {
  if (server.empty()) return InvalidArgument("--server: no controller URL (flag or SLUICE_SERVER)");
  Result<std::vector<std::string>> urls = wire::ParseServerList(server);
  return urls ? Status::Ok() : InvalidArgument("--server: " + urls.error().message());
}

// --resources and --attributes into `host`. The error names the flag.
Status ReadHostFlags(const AgentFlags& flags, core::HostSpec& host) {
  if (!flags.resources.empty()) {
    auto resources = agent::ParseResourceList(flags.resources);
    if (!resources) return InvalidArgument("--resources: " + resources.error().message());
    host.resources = *resources;
  }
  if (!flags.attributes.empty()) {
    auto attributes = agent::ParseAttributeList(flags.attributes);
    if (!attributes) return InvalidArgument("--attributes: " + attributes.error().message());
    host.attributes = *attributes;
  }
  return Status::Ok();
}

// The search path for nvidia-smi: the agent's own, as a shell would search it.
std::string SearchPath() {
  const char* path = std::getenv("PATH");
  return path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
}

// The host's GPUs, looked for once at start and sent with every registration (R-GPU-1). Said
// in the log: a host configured with other GPUs is closed by the controller.
wire::GpuReport DetectGpusAtStart(const std::string& name) {
  const Result<agent::GpuInventory> found = agent::DetectGpus({.search_path = SearchPath()});
  if (!found) {
    spdlog::warn("agent {}: GPU detection failed: {}", name, found.error().message());
  } else if (!found->nvidia_smi) {
    spdlog::info("agent {}: no nvidia-smi on PATH: no GPUs detected", name);
  } else {
    std::string listed;
    for (size_t i = 0; i < found->devices.size(); ++i) {
      const core::GpuDevice& d = found->devices[i];
      listed += (i > 0 ? "; " : "") + std::to_string(d.index) + ": " + found->names[i] + " (" +
                d.model + ", " + std::to_string(d.memory_mb) + " MB, NUMA " +
                std::to_string(d.numa) + ", " + std::to_string(d.nvlink.size()) + " NVLink peers)";
    }
    spdlog::info("agent {}: nvidia-smi lists {} GPUs{}{}", name, found->devices.size(),
                 listed.empty() ? "" : ": ", listed);
    if (!found->topology_error.empty()) {
      spdlog::warn("agent {}: GPU topology unknown (no NUMA nodes, no NVLink): {}", name,
                   found->topology_error);
    }
  }
  return agent::GpuReportOf(found);
}

// uname's machine (x86_64, aarch64); empty when uname fails.
std::string Machine() {
  struct utsname names {};
  return uname(&names) == 0 ? names.machine : "";
}

// `--detect`: the host's stanza on stdout.
int PrintDetectedHost(const AgentFlags& flags) {
  std::string name = flags.name;
  if (name.empty()) {
    char host[256] = {};
    name = gethostname(host, sizeof host - 1) == 0 ? host : "localhost";
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  Result<std::vector<agent::LogicalCpu>> layout = agent::ReadCpuTopology();
  const agent::DetectedHost detected{.name = name,
                                     .slots = cpus > 0 ? static_cast<int32_t>(cpus) : 0,
                                     .cpus = layout ? agent::DescribeCpus(*layout) : "",
                                     .memory_mb = agent::ReadMemTotalMb(),
                                     .features = agent::ReadCpuFeatures(Machine()),
                                     .gpus = agent::DetectGpus({.search_path = SearchPath()})};
  std::cout << agent::HostStanza(detected);
  if (!detected.gpus) {
    std::cerr << "error: GPU detection: " << detected.gpus.error().message() << "\n";
    return 1;
  }
  return 0;
}

// What Agent::Run's non-zero exit status means, on stderr.
void SayWhyRunEnded(int code, const std::string& host) {
  if (code == 1) std::cerr << "error: the controller refused the agent's credentials\n";
  if (code == 2) {
    std::cerr << "error: the controller does not let this agent serve host " << host
              << " (the refusal above says why); starting the agent again does not help until "
                 "the cluster configuration or the agent's credential changes\n";
  }
}

int RunAgent(const AgentFlags& flags) {
  Result<std::string> token_or = AgentToken(flags);
  if (!token_or) {
    std::cerr << "error: " << token_or.error().message() << "\n";
    return 2;
  }
  const std::string token = *token_or;
  agent::AgentOptions options{
      .server = FromEnv(flags.server, "SLUICE_SERVER"),
      .token = token,
      .ca_file = FromEnv(flags.ca_file, "SLUICE_CA_FILE"),
      .work_dir = flags.work_dir,
      .job_tmpdir = flags.job_tmpdir,
      .state_dir = flags.state_dir.empty() ? DefaultStateDir(flags) : flags.state_dir,
      .fence_grace = std::chrono::milliseconds(flags.fence_grace_ms),
      .kill_jobs_on_stop = flags.kill_jobs_on_stop,
  };
  options.host = {.name = flags.name, .slots = flags.slots, .tags = flags.tags};
  Result<agent::CgroupMode> mode = agent::ParseCgroupMode(flags.cgroup);
  if (!mode) {
    std::cerr << "error: --cgroup: " << mode.error().message() << "\n";
    return 2;
  }
  options.runner = {
      .allow_root = flags.allow_root_jobs,
      .cgroup = {.mode = *mode,
                 .fs_root = flags.cgroup_root,
                 .path = flags.cgroup_path.empty()
                             ? agent::DefaultCgroupPath(flags.name, options.state_dir)
                             : flags.cgroup_path},
      .pids_limit = flags.pids_limit > 0 ? std::optional<int64_t>(flags.pids_limit) : std::nullopt,
      .bind_cpus = flags.bind_cpus};
  if (Status server = CheckServerFlag(options.server); !server.ok()) {
    std::cerr << "error: " << server.message() << "\n";
    return 2;
  }
  if (options.token.empty()) {
    options.munge_socket = FromEnv(flags.munge_socket, "SLUICE_MUNGE_SOCKET");
    if (options.munge_socket.empty()) options.munge_socket = auth::kDefaultMungeSocket;
    if (!auth::IsSocket(options.munge_socket)) {
      std::cerr << "error: --token: no agent token (flag or SLUICE_TOKEN), and no munged socket at "
                << options.munge_socket << " for MUNGE\n";
      return 2;
    }
  }
  if (Status host = ReadHostFlags(flags, options.host); !host.ok()) {
    std::cerr << "error: " << host.message() << "\n";
    return 2;
  }
  if (Status logging = SetUpLogging(flags.log, "sluice"); !logging.ok()) {
    std::cerr << "error: " << logging.message() << "\n";
    return 2;
  }
  // Before nvidia-smi runs and any thread starts: it unsets NOTIFY_SOCKET and the watchdog's
  // variables, which no child may inherit.
  const std::unique_ptr<daemon::ServiceNotifier> notifier =
      daemon::ServiceNotifier::FromEnvironment();
  options.notifier = notifier.get();
  options.gpus = DetectGpusAtStart(flags.name);
  for (const core::GpuDevice& gpu : options.gpus->devices)
    options.runner.gpu_numa[gpu.index] = gpu.numa;

  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed connection is an error result, not a death

  agent::Agent agent(std::move(options));
  if (Status set_up = agent.Setup(); !set_up.ok()) {
    const std::string& message = set_up.message();
    std::cerr << "error: "
              << (message.starts_with("--") ? "" : "--cgroup " + flags.cgroup + ": ")
              << message << "\n";
    return 2;
  }
  const int code = agent.Run(g_agent_stop);
  SayWhyRunEnded(code, flags.name);
  return code;
}

// `--virtual RANGE` (R-SCALE-1): many hosts, no processes (agent/virtual_agent.h).
int RunVirtualHosts(const AgentFlags& flags) {
  Result<std::string> token_or = AgentToken(flags);
  if (!token_or) {
    std::cerr << "error: " << token_or.error().message() << "\n";
    return 2;
  }
  const std::string token = *token_or;
  Result<std::vector<std::string>> names = config::ExpandHostRange(flags.virtual_range);
  if (!names) {
    std::cerr << "error: --virtual: " << names.error().message() << "\n";
    return 2;
  }
  agent::VirtualAgentOptions options{
      .hosts = std::move(*names),
      .slots = flags.slots > 0 ? flags.slots : 16,
      .server = FromEnv(flags.server, "SLUICE_SERVER"),
      .token = token,
      .ca_file = FromEnv(flags.ca_file, "SLUICE_CA_FILE"),
      .connections = flags.virtual_connections,
      .min_gap = std::chrono::milliseconds(flags.virtual_gap_ms),
  };
  if (options.server.empty() || options.token.empty()) {
    std::cerr << "error: --virtual: needs --server and --token (flags or SLUICE_SERVER, "
                 "SLUICE_TOKEN)\n";
    return 2;
  }
  if (Status server = CheckServerFlag(options.server); !server.ok()) {
    std::cerr << "error: " << server.message() << "\n";
    return 2;
  }
  if (Status logging = SetUpLogging(flags.log, "sluice"); !logging.ok()) {
    std::cerr << "error: " << logging.message() << "\n";
    return 2;
  }
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return agent::RunVirtualAgent(options, g_agent_stop);
}

}  // namespace

void RegisterAgentCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("agent", "run a host's agent: register and run jobs");
  auto flags = std::make_shared<AgentFlags>();
  cmd->add_option("--name", flags->name, "host name (unique per agent)");
  cmd->add_option("--virtual", flags->virtual_range,
                  "serve these virtual hosts from this process instead (scale tests, e.g. "
                  "'vh[00001-10000]'): jobs run no process, they last SLUICE_VIRTUAL_RUNTIME "
                  "seconds of their env (else N of `sleep N`) and exit with "
                  "SLUICE_VIRTUAL_EXIT");
  cmd->add_option("--virtual-connections", flags->virtual_connections,
                  "virtual hosts: threads and HTTP connections they share (default 8)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--virtual-gap-ms", flags->virtual_gap_ms,
                  "virtual hosts: least time between two exchanges of a connection, so that "
                  "starts and ends travel together (default 50)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--server", flags->server,
                  "controller URL, or a comma-separated list to follow the leader (default "
                  "$SLUICE_SERVER)");
  cmd->add_option("--token", flags->token,
                  "agent token (default $SLUICE_TOKEN); prefer --token-file");
  cmd->add_option("--token-file", flags->token_file,
                  "a file (mode 600) holding the agent token; read, never shown to jobs");
  cmd->add_option("--slots", flags->slots, "job slots of a host the controller does not know")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--resources", flags->resources, "host resources, e.g. mem=64000,gpu=2");
  cmd->add_option("--attributes", flags->attributes, "host attributes, e.g. type=linux");
  cmd->add_option("--tags", flags->tags, "host tags, e.g. a,b")->delimiter(',');
  cmd->add_option("--munge-socket", flags->munge_socket,
                  "munged's socket, used without a token (default $SLUICE_MUNGE_SOCKET)");
  cmd->add_option("--ca-file", flags->ca_file,
                  "CA certificates verifying an https:// controller (default $SLUICE_CA_FILE)");
  cmd->add_option("--work-dir", flags->work_dir, "working directory of jobs that name none");
  cmd->add_option("--job-tmpdir", flags->job_tmpdir,
                  "give each job a private TMPDIR here, DIR/JOB.tmpdir (mode 700, the job's "
                  "account's), removed when the job ends on this host (as LSF's job TMPDIR)");
  cmd->add_option("--state-dir", flags->state_dir,
                  "the agent's private journal of launched and ended jobs (default: "
                  "WORK_DIR/.sluice-agent-NAME, else /var/lib/sluice/agent-NAME as root); "
                  "owned by the agent's account and writable by it alone");
  cmd->add_option("--fence-grace-ms", flags->fence_grace_ms,
                  "SIGTERM-to-SIGKILL grace when the lease expires (keep below the "
                  "controller's host-loss grace)")
      ->check(CLI::NonNegativeNumber);
  AddLogFlags(cmd, flags->log);
  cmd->add_option("--cgroup", flags->cgroup,
                  "job containment: auto (v2 or v1, whichever the host has; else process "
                  "groups), v2, v1 or none (process groups and rlimits only)");
  cmd->add_option("--cgroup-root", flags->cgroup_root, "where the cgroup file systems are");
  cmd->add_option("--cgroup-path", flags->cgroup_path,
                  "the agent's cgroup sub-tree under each hierarchy (default "
                  "sluice/NAME-HASH, HASH of the state directory); agents on one machine "
                  "need distinct ones: each removes the stale job cgroups in its own at start");
  cmd->add_option("--pids-limit", flags->pids_limit, "at most this many processes per job")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--bind-cpus", flags->bind_cpus,
                "bind each job to one whole core per slot it has here (cpuset cgroup), the "
                "cores next to its GPUs first; needs the cpuset controller");
  cmd->add_flag("--detect", flags->detect,
                "print this host's stanza for the cluster YAML (CPUs, memory and the GPUs "
                "nvidia-smi lists) and exit");
  cmd->add_flag("--allow-root-jobs", flags->allow_root_jobs,
                "run jobs whose account has uid 0 (refused by default; the controller must "
                "also allow them: auth.allow_root_jobs)");
  cmd->add_flag("--kill-jobs-on-stop", flags->kill_jobs_on_stop,
                "on SIGTERM kill this host's jobs (each ends saying the agent stopped) instead "
                "of leaving batch jobs running for the next agent to adopt; for a host being "
                "decommissioned");
  cmd->callback([flags, &exit_code] {
    if (flags->detect) {
      exit_code = PrintDetectedHost(*flags);
    } else if (!flags->virtual_range.empty()) {
      exit_code = RunVirtualHosts(*flags);
    } else if (flags->name.empty()) {
      std::cerr << "error: --name: required (or --virtual RANGE)\n";
      exit_code = 2;
    } else {
      exit_code = RunAgent(*flags);
    }
  });
}

}  // namespace sluice::cli
