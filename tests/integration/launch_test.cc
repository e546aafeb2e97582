// Loopback integration of steps inside jobs (issue 39, R-LAUNCH-1/2, R-COMPAT-2): a real
// server, two real agents (h1, h2) and Debian's Open MPI and mpi4py.
//  - mpi4py's ring over 4 ranks on two agents' hosts, launched by mpirun through srun (Open
//    MPI's Slurm launcher, which SLURM_JOB_ID in the job selects) and through `sluice launch`
//    as its rsh agent: every rank prints the ring's sum; the daemons are steps, listed with
//    their hosts in the job's record, and a step runs in the job's cgroup on its host;
//  - exit codes and signals round-trip, stdin reaches the step, a host outside the allocation,
//    a launch outside any job, another user's job and another job's credential are refused;
//  - cancelling the job during an MPI run leaves no process of it (ranks, daemons, launch
//    clients) on any host.
// Needs root (the agents switch jobs to nobody) and mpirun with mpi4py; skipped otherwise.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

// Options for several "hosts" on one machine: TCP over loopback only (shared memory would
// collide: they share a hostname; ../shared/clients/README.md).
constexpr const char* kMpiFlags =
    "--mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo";

// The processes whose environment holds `marker` (NAME=VALUE), by pid.
std::vector<pid_t> ProcessesMarked(const std::string& marker) {
  std::vector<pid_t> found;
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream environ(entry.path() / "environ", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(environ)), std::istreambuf_iterator<char>());
    if (text.find(marker + '\0') != std::string::npos || text.ends_with(marker)) {
      found.push_back(std::stoi(name));
    }
  }
  return found;
}

class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the agents switch jobs to nobody";
    if (access("/usr/bin/mpirun", X_OK) != 0 ||
        system("/usr/bin/python3 -c 'import mpi4py' 2>/dev/null") != 0) {
      GTEST_SKIP() << "needs Debian's openmpi-bin and python3-mpi4py (make setup)";
    }
    cluster_ = std::make_unique<Cluster>(DefaultClusterYaml(
        "hosts:\n  - {name: 'h[1-2]', slots: 2, resources: {mem: 4000}}\n"
        "queues:\n  - {name: normal, policy: fifo}\n"));
    std::string error;
    ASSERT_TRUE(cluster_->StartServer(&error)) << error;
    // Each host's jobs get a TMPDIR of their own, as on separate machines: Open MPI's daemons
    // wipe their job's session directory under TMPDIR as they start, so two "hosts" sharing
    // /tmp removed each other's (seen in CI).
    for (const char* host : {"h1", "h2"}) {
      cluster_->StartAgent(host, 2, "", {"--job-tmpdir", (c().dir() / ("tmp-" + std::string(host))).string()});
    }
    ASSERT_TRUE(Eventually([&] {
      return cluster_->HostState("h1") == "ok" && cluster_->HostState("h2") == "ok";
    }, 30s)) << cluster_->Logs();
    const fs::path build = fs::path(testing::SluiceBinary()).parent_path();
    path_ = "PATH=" + (build / "compat").string() + ":" + build.string() + ":/usr/bin:/bin";
    fs::copy_file(fs::path(testing::SourceDir()) / "tests/integration/mpi/ring.py",
                  c().dir() / "ring.py");
    fs::permissions(c().dir() / "ring.py", fs::perms::all);
    marker_ = "LAUNCH_TEST_MARK=" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  Cluster& c() { return *cluster_; }

  // Submits `command` as alice with the test's PATH and marker; returns the job id.
  int64_t Submit(const std::string& command, const std::vector<std::string>& flags = {},
                 const fs::path& out = {}) {
    std::vector<std::string> args = {"submit", "--parsable", "--cwd", c().dir().string()};
    args.insert(args.end(), flags.begin(), flags.end());
    if (!out.empty()) args.insert(args.end(), {"-o", out.string()});
    args.insert(args.end(), {"--", command});
    testing::ProcessResult result = c().Cli(args, "alice-token", {path_, marker_});
    EXPECT_EQ(result.exit_code, 0) << result.stderr_text;
    return result.exit_code == 0 ? std::stoll(result.stdout_text) : -1;
  }

  std::string RunJob(const std::string& command, const std::vector<std::string>& flags = {}) {
    const fs::path out = c().dir() / ("out-" + std::to_string(++outputs_));
    const int64_t id = Submit(command, flags, out);
    EXPECT_TRUE(c().WaitAllEnded({id}, 120s)) << c().Logs();
    last_job_ = id;
    return testing::ReadFile(out).value_or("");
  }

  // The job's steps. A read can fail on a loaded machine (seen in CI: a null job, a request
  // not answered in time), so it is tried again for a while before it counts as none.
  json Steps(int64_t id) {
    json job;
    Eventually([&] { return (job = c().Job(id)).is_object(); }, 30s);
    return job.is_object() ? job.value("steps", json::array()) : json::array();
  }

  std::unique_ptr<Cluster> cluster_;
  std::string path_;
  std::string marker_;
  int outputs_ = 0;
  int64_t last_job_ = 0;
};

int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(LaunchTest, Mpi4pyRingRunsOnBothAgentsThroughSrunAndThroughSluiceLaunch) {
  // As the issue writes it: Open MPI picks its Slurm launcher (SLURM_JOB_ID), i.e. srun.
  std::string out = RunJob(std::string("mpirun --mca plm_rsh_agent 'sluice launch' ") + kMpiFlags +
                               " --host $SLUICE_HOSTS -np 4 /usr/bin/python3 ring.py",
                           {"-n", "4", "-R", "span[ptile=2]"});
  EXPECT_EQ(c().JobState(last_job_), "DONE") << out << c().Logs();
  EXPECT_EQ(CountLines(out, "sum=6"), 4) << out;
  // Two ranks per host, each in the job's cgroup under that host's agent (its daemon's step).
  // mpirun forwards the ranks' output in chunks: a line's newline may come after another's.
  const std::string job_cgroup = "/job_" + std::to_string(last_job_);
  const std::regex h1("/h1" + job_cgroup + "(?![0-9])"), h2("/h2" + job_cgroup + "(?![0-9])");
  const auto count = [&](const std::regex& re) {
    return std::distance(std::sregex_iterator(out.begin(), out.end(), re), std::sregex_iterator());
  };
  EXPECT_EQ(count(h1), 2) << out;
  EXPECT_EQ(count(h2), 2) << out;
  json steps = Steps(last_job_);
  ASSERT_EQ(steps.size(), 2u) << steps.dump();
  std::set<std::string> hosts;
  for (const json& s : steps) {
    hosts.insert(s.value("host", ""));
    // mpirun returns once its daemons said they exit; a daemon still exiting when the job's
    // script ends is killed with the job (as Slurm kills a job's steps at its end).
    const bool completed = s.value("state", "") == "COMPLETED";
    const bool killed_at_the_end = s.value("exit_code", 0) == 128 + SIGKILL ||
                                   s.value("signal", json()) == json(SIGKILL);
    EXPECT_TRUE(completed || killed_at_the_end) << s.dump();
    EXPECT_NE(s.value("command", "").find("orted"), std::string::npos) << s.dump();
  }
  EXPECT_EQ(hosts, (std::set<std::string>{"h1", "h2"}));

  // The rsh way: `sluice launch` as Open MPI's ssh, the hostfile every job has.
  out = RunJob(std::string("mpirun --mca plm rsh --mca plm_rsh_agent 'sluice launch' ") + kMpiFlags +
                   " --hostfile $SLUICE_HOSTFILE -np 4 /usr/bin/python3 ring.py"
                   " && sluice launch h2 cat /proc/self/cgroup"
                   " && echo tmp=$TMPDIR && sluice launch h2 'echo tmp=$TMPDIR'",  // ssh's way
               {"-n", "4", "-R", "span[ptile=2]"});
  EXPECT_EQ(c().JobState(last_job_), "DONE") << out << c().Logs();
  EXPECT_EQ(CountLines(out, "sum=6"), 4) << out;
  // The step on h2 ran in the job's cgroup under h2's agent.
  EXPECT_NE(out.find("/h2/job_" + std::to_string(last_job_)), std::string::npos) << out;
  EXPECT_EQ(Steps(last_job_).size(), 4u) << Steps(last_job_).dump();
  // The job and its step on h2 each had that host's TMPDIR for the job; both went with it.
  const std::string tmpdir = std::to_string(last_job_) + ".tmpdir";
  for (const char* host : {"h1", "h2"}) {
    const fs::path dir = c().dir() / ("tmp-" + std::string(host)) / tmpdir;
    EXPECT_NE(out.find("tmp=" + dir.string() + "\n"), std::string::npos) << out;
    EXPECT_TRUE(Eventually([&] { return !fs::exists(dir); }, 30s)) << dir;
  }
}

// Issue 40's two batch routes for Open MPI, as a Slurm or an LSF user types them: `sbatch
// --wait` with a wrapped mpirun (Open MPI sees SLURM_JOB_ID and launches its daemons with
// srun), and `bsub -K` with blaunch as mpirun's rsh agent over LSF's hostfile.
TEST_F(LaunchTest, OpenMpiRunsThroughSbatchWaitAndThroughBsubK) {
  const fs::path compat = fs::path(testing::SluiceBinary()).parent_path() / "compat";
  auto run = [&](const std::string& command, std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/env", path_, marker_, "SLUICE_SERVER=" + c().url(),
                               "SLUICE_TOKEN=alice-token", (compat / command).string()});
    fs::create_directories(c().dir() / command);
    return testing::RunProcess(args, c().dir() / command, 150s);
  };
  const std::string ring = std::string(kMpiFlags) + " /usr/bin/python3 " +
                           (c().dir() / "ring.py").string();
  const fs::path slurm_out = c().dir() / "sbatch.out";
  testing::ProcessResult sbatch =
      run("sbatch", {"--wait", "-N", "2", "-n", "4", "--ntasks-per-node=2", "-D",
                     c().dir().string(), "-o", slurm_out.string(), "--wrap", "mpirun " + ring});
  const std::string slurm_text = testing::ReadFile(slurm_out).value_or("");
  EXPECT_EQ(sbatch.exit_code, 0) << sbatch.stdout_text << sbatch.stderr_text << slurm_text
                                 << c().Logs();
  EXPECT_EQ(CountLines(slurm_text, "sum=6"), 4) << slurm_text;

  const fs::path lsf_out = c().dir() / "bsub.out";
  testing::ProcessResult bsub =
      run("bsub", {"-n", "4", "-R", "span[ptile=2]", "-K", "-cwd", c().dir().string(), "-o",
                   lsf_out.string(),
                   "mpirun --mca plm_rsh_agent blaunch --hostfile $LSB_DJOB_HOSTFILE " + ring});
  const std::string lsf_text = testing::ReadFile(lsf_out).value_or("");
  EXPECT_EQ(bsub.exit_code, 0) << bsub.stdout_text << bsub.stderr_text << lsf_text << c().Logs();
  EXPECT_EQ(CountLines(lsf_text, "sum=6"), 4) << lsf_text;
  EXPECT_NE(bsub.stdout_text.find("Job <"), std::string::npos) << bsub.stdout_text;
}

TEST_F(LaunchTest, ExitCodesSignalsStdinAndRefusals) {
  const std::string out = RunJob(
      "sluice launch h2 exit 7; echo \"exit=$?\"; "
      "sluice launch h2 'kill -TERM $$'; echo \"term=$?\"; "
      "echo through-stdin | sluice launch h2 cat; "
      "sluice launch h2 'echo to-stderr >&2' 2>&1; "
      "sluice launch h2 echo node=\\$SLUICE_NODEID task=\\$SLUICE_TASK_ID; "
      "sluice launch h9 true; echo \"outside=$?\"; "
      "env | grep -E '^(SLUICE_JOB_CREDENTIAL|SLUICE_HOSTFILE|LSB_DJOB_HOSTFILE)=' | sort; "
      "cat $SLUICE_HOSTFILE",
      {"-n", "4", "-R", "span[ptile=2]"});
  const int64_t job = last_job_;
  EXPECT_NE(out.find("exit=7\n"), std::string::npos) << out;
  EXPECT_NE(out.find("term=143\n"), std::string::npos) << out;
  EXPECT_NE(out.find("through-stdin\n"), std::string::npos) << out;
  EXPECT_NE(out.find("to-stderr\n"), std::string::npos) << out;
  EXPECT_NE(out.find("node=1 task=0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("host h9 is not in job " + std::to_string(job) + "'s allocation"),
            std::string::npos) << out;
  EXPECT_NE(out.find("outside=2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("h1\nh1\nh2\nh2\n"), std::string::npos) << out;  // one line per slot
  // Steps are recorded with their exits: 7, 143 (signal 15), ...
  json steps = Steps(job);
  ASSERT_GE(steps.size(), 2u) << steps.dump();
  EXPECT_EQ(steps[0].value("exit_code", -1), 7);
  EXPECT_EQ(steps[0].value("state", ""), "FAILED");
  EXPECT_EQ(steps[1].value("exit_code", -1), 143);
  EXPECT_EQ(steps[1].value("signal", 0), 15);
  // ... and kept in history (JSON here; CSV rows ID.N in tests/client/history_format_test.cc).
  json history = c().Get("/v1/history?limit=100");
  ASSERT_TRUE(history.is_object()) << history.dump();
  bool found = false;
  for (const json& row : history["jobs"]) {
    if (row.value("id", int64_t{0}) != job) continue;
    found = true;
    EXPECT_EQ(row["steps"].size(), steps.size()) << row.dump();
  }
  EXPECT_TRUE(found) << history.dump();

  // Outside any job.
  testing::ProcessResult outside = c().Cli({"launch", "h1", "true"});
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_NE(outside.stderr_text.find("only inside a job"), std::string::npos)
      << outside.stderr_text;

  // Another user's job, and another job's credential.
  const int64_t running = Submit("env > env.tmp && mv env.tmp env.txt; sleep 300", {"-n", "2"});
  ASSERT_TRUE(Eventually([&] { return fs::exists(c().dir() / "env.txt") &&
                                      c().JobState(running) == "RUNNING"; }, 60s)) << c().Logs();
  int status = 0;
  c().Post("/v1/jobs/" + std::to_string(running) + "/steps", {{"host", "h1"}, {"command", "id"}},
           "bob-token", &status);
  EXPECT_EQ(status, 403);
  std::string credential;
  {
    std::ifstream env(c().dir() / "env.txt");
    for (std::string line; std::getline(env, line);) {
      if (line.starts_with("SLUICE_JOB_CREDENTIAL=")) credential = line.substr(22);
    }
  }
  ASSERT_FALSE(credential.empty());
  httplib::Client client(c().url());
  const json hosts = c().Job(running)["hosts"];
  ASSERT_TRUE(hosts.is_array() && !hosts.empty()) << c().Job(running).dump();
  const json body = {{"host", hosts[0].value("name", "")}, {"command", "id"}};
  auto as_job = [&](int64_t id) {
    httplib::Result r = client.Post(("/v1/jobs/" + std::to_string(id) + "/steps").c_str(),
                                    {{"Authorization", "Job " + credential}}, body.dump(),
                                    "application/json");
    return r ? r->status : 0;
  };
  EXPECT_EQ(as_job(job), 401);      // another job (ended anyway)
  EXPECT_EQ(as_job(running), 201);  // its own
  EXPECT_EQ(c().Cli({"cancel", std::to_string(running)}).exit_code, 0);
  ASSERT_TRUE(c().WaitAllEnded({running}, 30s));
  EXPECT_EQ(as_job(running), 401);  // worth nothing once the run ended
}

TEST_F(LaunchTest, AStepOnAnotherHostEndsWithItsJobsRunLimit) {
  // The run limit leaves a loaded machine time to start the step before it strikes.
  const fs::path out = c().dir() / "run-limit.out";
  const int64_t id = Submit("sluice launch h2 sleep 3008",
                            {"-n", "2", "-R", "span[ptile=1]", "-W", "10s"}, out);
  ASSERT_TRUE(Eventually([&] { return !ProcessesMarked(marker_).empty() && Steps(id).size() == 1; },
                         60s)) << testing::ReadFile(out).value_or("") << c().Logs();
  ASSERT_TRUE(c().WaitAllEnded({id}, 60s)) << c().Logs();
  EXPECT_TRUE(Eventually([&] { return ProcessesMarked(marker_).empty(); }, 60s))
      << ProcessesMarked(marker_).size() << " processes left\n" << c().Logs();
  // Ended by a signal: the TERM its `sluice launch` forwarded when the run limit struck, or the
  // KILL of the job's end.
  EXPECT_TRUE(Eventually([&] { return Steps(id)[0]["signal"].is_number(); }, 30s))
      << Steps(id).dump();
}

TEST_F(LaunchTest, CancelDuringAnMpiRunLeavesNoProcessOnAnyHost) {
  const int64_t id = Submit(std::string("mpirun ") + kMpiFlags +
                                " --host $SLUICE_HOSTS -np 4 /bin/sleep 3007",
                            {"-n", "4", "-R", "span[ptile=2]"}, c().dir() / "cancel.out");
  // mpirun, srun, two daemons and four ranks carry the marker.
  auto sleeping = [&] {
    int n = 0;
    for (pid_t pid : ProcessesMarked(marker_)) {
      std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
      std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
      if (text.find("3007") != std::string::npos) ++n;
    }
    return n;
  };
  ASSERT_TRUE(Eventually([&] { return sleeping() >= 4; }, 60s))
      << testing::ReadFile(c().dir() / "cancel.out").value_or("") << c().Logs();
  // Both steps are recorded (the ranks may run before the second step's record is read).
  ASSERT_TRUE(Eventually([&] { return Steps(id).size() == 2; }, 30s)) << Steps(id).dump();
  EXPECT_EQ(c().Cli({"cancel", std::to_string(id)}).exit_code, 0);
  ASSERT_TRUE(c().WaitAllEnded({id}, 60s)) << c().Logs();
  EXPECT_TRUE(Eventually([&] { return ProcessesMarked(marker_).empty(); }, 60s))
      << ProcessesMarked(marker_).size() << " processes left\n" << c().Logs();
}


// A terminal driven by tmux (send-keys, capture-pane): `sluice run --pty -- bash -i` is a shell
// on a pseudo-terminal of a cluster host, Ctrl-C reaches the remote process, and the shell's
// exit is the job's and the client's; `sluice alloc` starts a local shell in which
// `sluice launch --all` reaches every host of the allocation.
class InteractiveTest : public LaunchTest {
 protected:
  void SetUp() override {
    LaunchTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (access("/usr/bin/tmux", X_OK) != 0) GTEST_SKIP() << "needs tmux (make setup)";
    session_ = "sluice-launch-test-" + std::to_string(getpid());
    socket_ = (c().dir() / "tmux.sock").string();
  }
  void TearDown() override {
    if (!session_.empty()) Tmux("kill-server");
  }

  int Tmux(const std::string& args) {
    return system(("/usr/bin/tmux -S " + socket_ + " " + args + " >/dev/null 2>&1").c_str());
  }
  std::string Screen() {
    const fs::path file = c().dir() / "screen.txt";
    system(("/usr/bin/tmux -S " + socket_ + " capture-pane -p -S -200 -t " + session_ + " > " +
            file.string() + " 2>/dev/null").c_str());
    return testing::ReadFile(file).value_or("");
  }
  // Starts `command` (with the test's environment and the connection) in a detached session.
  void Start(const std::string& command) {
    const std::string env = path_ + " " + marker_ + " SLUICE_SERVER=" + c().url() +
                            " SLUICE_TOKEN=alice-token HOME=" + c().dir().string() +
                            " SHELL=/bin/bash";
    const std::string script = (c().dir() / "session.sh").string();
    {
      std::ofstream out(script);
      out << "cd " << c().dir().string() << "\n"
          << "env " << env << " " << command << "\n"
          << "echo client-exit=$?\n"
          << "sleep 600\n";
    }
    ASSERT_EQ(Tmux("new-session -d -x 120 -y 40 -s " + session_ + " /bin/bash " + script), 0);
  }
  bool ScreenShows(const std::string& text, std::chrono::seconds timeout = 60s) {
    return Eventually([&] { return Screen().find(text) != std::string::npos; }, timeout);
  }
  void Type(const std::string& keys) { Tmux("send-keys -t " + session_ + " " + keys); }

  std::string session_;
  std::string socket_;
};

TEST_F(InteractiveTest, RunPtyIsAShellOnAClusterHostAndCtrlCReachesIt) {
  Start("sluice run --pty -- bash --norc -i");
  // The remote prompt (capture-pane drops the trailing space).
  ASSERT_TRUE(ScreenShows("$\n")) << Screen() << c().Logs();
  Type("'sleep 200; echo not-interrupted' Enter");
  ASSERT_TRUE(Eventually([&] {
    for (pid_t pid : ProcessesMarked(marker_)) {
      std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
      std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
      if (text == std::string("sleep") + std::string(1, '\0') + "200" + std::string(1, '\0')) return true;
    }
    return false;
  }, 30s)) << Screen();
  Type("C-c");
  Type("'echo job=$SLUICE_JOB_ID; tty; exit 3' Enter");
  ASSERT_TRUE(ScreenShows("client-exit=3")) << Screen() << c().Logs();
  const std::string screen = Screen();
  // The terminal echoed the typed lines; their output is on lines of its own.
  EXPECT_EQ(screen.find("\nnot-interrupted\n"), std::string::npos) << screen;
  EXPECT_NE(screen.find("\n/dev/pts/"), std::string::npos) << screen;
  const size_t at = screen.find("\njob=");
  ASSERT_NE(at, std::string::npos) << screen;
  const int64_t id = std::atoll(screen.c_str() + at + 5);
  ASSERT_GT(id, 0) << screen;
  ASSERT_TRUE(c().WaitAllEnded({id}, 30s));
  EXPECT_EQ(c().JobState(id), "EXIT");
  EXPECT_EQ(c().Job(id).value("exit_code", -1), 3);
}

TEST_F(InteractiveTest, AllocStartsALocalShellWhoseLaunchesReachEveryHost) {
  Start("sluice alloc -n 2 -R 'span[ptile=1]'");
  ASSERT_TRUE(ScreenShows("exit the shell to end it")) << Screen() << c().Logs();
  Type("'sluice launch --all echo on-\\$SLURMD_NODENAME; exit 4' Enter");
  ASSERT_TRUE(ScreenShows("client-exit=4")) << Screen() << c().Logs();
  const std::string screen = Screen();
  EXPECT_NE(screen.find("on-h1"), std::string::npos) << screen;
  EXPECT_NE(screen.find("on-h2"), std::string::npos) << screen;
  // The allocation ended with the shell.
  EXPECT_TRUE(Eventually([&] {
    json jobs = c().Get("/v1/jobs?state=RUNNING");
    return jobs.is_array() && jobs.empty();
  }, 30s)) << c().Logs();
}

}  // namespace
}  // namespace sluice::integration
