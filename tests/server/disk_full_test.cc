// A full disk under the state directory (issue 19), on a real filesystem: a small tmpfs
// mounted for the test (root only; skipped with the reason otherwise). The controller stays
// up: a write that fails answers 503 naming the cause, scheduling pauses, agents' reports
// wait (are not acknowledged) and their leases hold, a restart on the full disk comes up
// read-only, everything resumes once space returns, and job ids are never given twice.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "server/controller_fixture.h"
#include "wire/agent_protocol.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;

// A tmpfs of `megabytes` on DIR/state, unmounted at the end.
class SmallDisk {
 public:
  SmallDisk(const std::filesystem::path& base, int megabytes) : path_(base / "state") {
    std::filesystem::create_directories(path_);
    const std::string options = "size=" + std::to_string(megabytes) + "m";
    if (geteuid() != 0) {
      why_not_ = "not root: cannot mount a tmpfs";
    } else if (mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      why_not_ = std::string("mount tmpfs: ") + std::strerror(errno);
    } else {
      mounted_ = true;
    }
  }
  ~SmallDisk() {
    if (mounted_ && umount2(path_.c_str(), MNT_DETACH) != 0) {
      ADD_FAILURE() << "umount " << path_ << ": " << std::strerror(errno);
    }
  }
  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }
  std::string path() const { return path_.string(); }

  // Writes DIR/state/filler until the disk is full.
  void Fill() {
    const std::string filler = (path_ / "filler").string();
    int fd = open(filler.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const std::string block(4096, 'x');
    while (write(fd, block.data(), block.size()) > 0) {
    }
    const std::string byte = "x";
    while (write(fd, byte.data(), 1) > 0) {
    }
    close(fd);
  }
  void Free() { std::filesystem::remove(path_ / "filler"); }

 private:
  std::filesystem::path path_;
  bool mounted_ = false;
  std::string why_not_;
};

json Job(const std::string& command = "true", int tasks = 1) {
  return {{"command", command}, {"tasks", tasks}};
}

// Submits until a submission is refused with 503 (the disk is full); returns its reply, and
// in `last_id` the last id acknowledged before it.
Reply SubmitUntilRefused(ControllerHarness& h, JobId& last_id) {
  for (int i = 0; i < 200; ++i) {
    Reply r = h.c().Submit(Caller{.user = "alice"}, Job(std::string(2000, 'c')));
    if (r.status != 200) return r;
    last_id = r.body["id"].get<JobId>();
  }
  return Reply::Error(0, "the disk never filled");
}

TEST(DiskFullTest, TheControllerPausesOnAFullDiskAndResumesWhenSpaceReturns) {
  sluice::testing::TempDir dir;
  SmallDisk disk(dir.path(), 3);
  if (!disk.mounted()) GTEST_SKIP() << disk.why_not();
  ControllerHarness h(disk.path());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId running = h.Submit("alice", Job("sleep", 4));
  h.Cycle();
  ASSERT_EQ(testing::LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{running});
  h.Heartbeat("h1", json::array({running}));
  ASSERT_EQ(h.State(running), "RUNNING");
  const JobId waiting = h.Submit("alice", Job("true", 4));  // h1 is full; h2 has no agent

  disk.Fill();
  JobId last_id = waiting;
  Reply refused = SubmitUntilRefused(h, last_id);
  ASSERT_EQ(refused.status, 503) << refused.body.dump();
  EXPECT_NE(refused.body["error"].get<std::string>().find("no space left"), std::string::npos)
      << refused.body.dump();
  EXPECT_FALSE(h.c().Writable());
  EXPECT_NE(h.c().StoreFault().find("no space left"), std::string::npos);
  // Reads go on; the running job's exit is not acknowledged (the agent repeats it); the lease
  // holds; nothing is scheduled.
  EXPECT_EQ(h.State(waiting), "PENDING");
  json reply = h.Heartbeat("h1", json::array(), testing::Exited(running));
  EXPECT_TRUE(reply["ack"].empty()) << reply.dump();
  h.Advance(1000);
  h.Cycle();
  EXPECT_EQ(h.State(running), "RUNNING");
  EXPECT_TRUE(
      testing::LaunchedIds(h.Heartbeat("h1", json::array(), testing::Exited(running))).empty());
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, Job())).status, 503);

  disk.Free();
  h.Advance(1000);
  h.Cycle();  // the resync rewrites the rows
  h.Cycle();
  EXPECT_TRUE(h.c().Writable());
  EXPECT_EQ(h.c().StoreFault(), "");
  reply = h.Heartbeat("h1", json::array(), testing::Exited(running));
  EXPECT_FALSE(reply["ack"].empty()) << reply.dump();
  EXPECT_EQ(h.State(running), "DONE");
  h.Cycle();
  EXPECT_EQ(testing::LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{waiting});
  // The id taken by the submission whose commit failed is not given again.
  EXPECT_GE(h.Submit("alice", Job()), last_id + 2);
  EXPECT_NE(h.log().find("store writable again"), std::string::npos);
}

TEST(DiskFullTest, ARestartOnAFullDiskComesUpReadOnlyAndNeverReusesIds) {
  sluice::testing::TempDir dir;
  SmallDisk disk(dir.path(), 3);
  if (!disk.mounted()) GTEST_SKIP() << disk.why_not();
  ControllerHarness h(disk.path());
  h.Open();
  const JobId first = h.Submit("alice", Job());
  disk.Fill();
  JobId last_id = first;
  ASSERT_EQ(SubmitUntilRefused(h, last_id).status, 503);
  h.Close();

  h.Open();  // still full: up, read-only
  EXPECT_EQ(Reply(h.c().GetJob(first)).status, 200);
  EXPECT_EQ(Reply(h.c().GetJob(last_id)).status, 200);
  Reply refused = h.c().Submit(Caller{.user = "alice"}, Job());
  if (refused.status == 200) refused = SubmitUntilRefused(h, last_id);  // WAL space reused
  EXPECT_EQ(refused.status, 503) << refused.body.dump();
  EXPECT_FALSE(h.c().Writable());
  // A configured host's agent registers (its jobs run on); a new host cannot be added.
  EXPECT_EQ(h.Register("h1").status, 200);
  EXPECT_EQ(h.Register("x9").status, 503);

  disk.Free();
  h.Advance(1000);
  h.Cycle();
  h.Cycle();
  ASSERT_TRUE(h.c().Writable()) << h.c().StoreFault();
  // No acknowledged id comes back. (The id of the submission whose commit failed before the
  // restart was never acknowledged nor logged, and nothing could store it: it may.)
  const JobId next = h.Submit("alice", Job());
  EXPECT_GT(next, last_id);
  h.Close();
  h.Open();  // the next id was stored: after a restart it is not given again either
  EXPECT_GT(h.Submit("alice", Job()), next);
  h.Close();
}

// A `gpus: auto` host's agent registers while the disk is full: its devices are adopted in
// memory, and the resync once space returns stores them, so a restart before its agent
// registers again still knows them (else a GPU job there would be requeued).
TEST(DiskFullTest, GpusAnAgentReportedOnAFullDiskAreStoredByTheResync) {
  sluice::testing::TempDir dir;
  SmallDisk disk(dir.path(), 3);
  if (!disk.mounted()) GTEST_SKIP() << disk.why_not();
  core::ClusterConfig config = testing::TestCluster();
  config.hosts.push_back({.name = "auto1", .slots = 8, .gpus_auto = true});
  ControllerHarness h(disk.path());
  h.Open(config);
  const JobId first = h.Submit("alice", Job());
  disk.Fill();
  JobId last_id = first;
  ASSERT_EQ(SubmitUntilRefused(h, last_id).status, 503);
  const wire::GpuReport report{.probe = wire::GpuProbe::kNvidiaSmi,
                               .devices = {{.index = 0, .model = "A100", .memory_mb = 40960},
                                           {.index = 1, .model = "A100", .memory_mb = 40960}}};
  ASSERT_EQ(Reply(h.c().Register(wire::EncodeRegister(
                      {.host = {.name = "auto1", .slots = 8}, .gpus = report})))
                .status,
            200);
  disk.Free();
  h.Advance(1000);
  h.Cycle();  // the resync
  h.Cycle();
  ASSERT_TRUE(h.c().Writable()) << h.c().StoreFault();
  h.Close();
  h.Open(config);  // its agent has not registered again
  bool found = false;
  for (const json& host : Reply(h.c().Hosts()).body) {
    if (host["name"] != "auto1") continue;
    found = true;
    EXPECT_EQ(host["resources"]["gpu"], 2) << host.dump();
  }
  EXPECT_TRUE(found);
  h.Close();
}

}  // namespace
}  // namespace sluice::server
