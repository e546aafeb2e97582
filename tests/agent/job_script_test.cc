// The agent's private script copies (R-UX-1) and its peek reader (R-UX-5).
#include "agent/job_script.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "agent/instance_name.h"
#include "agent/peek_reader.h"
#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

using ::sluice::testing::ReadFile;
using ::sluice::testing::TempDir;
using ::sluice::testing::WriteFile;

TEST(ScriptFilesTest, APrivateCopyRunWithItsInterpreterAndArguments) {
  TempDir dir;
  ScriptFiles scripts((dir.path() / "scripts").string(), "h1");
  wire::Launch launch{.job = 7, .argv = {"job.sh", "a", "b"}, .script = "#!/bin/bash\necho $1\n"};
  JobSpec spec{.job = 7, .command = "ignored"};
  ASSERT_TRUE(scripts.Prepare(launch, spec).ok());
  EXPECT_EQ(spec.argv, (std::vector<std::string>{scripts.PathOf(7), "a", "b"}));
  EXPECT_TRUE(spec.command.empty());
  EXPECT_EQ(ReadFile(scripts.PathOf(7)), "#!/bin/bash\necho $1\n");
  struct stat st {};
  ASSERT_EQ(stat(scripts.PathOf(7).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0500u);
  ASSERT_EQ(stat((dir.path() / "scripts").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0711u);
  // Without `#!`: /bin/sh runs it. A second launch of the job replaces the copy.
  launch.script = "echo plain\n";
  ASSERT_TRUE(scripts.Prepare(launch, spec).ok());
  EXPECT_EQ(spec.argv, (std::vector<std::string>{"/bin/sh", scripts.PathOf(7), "a", "b"}));
  scripts.Remove(7);
  EXPECT_FALSE(ReadFile(scripts.PathOf(7)).has_value());
}

// Two agents named h1 on one machine (two test clusters at once) shared the default directory,
// and one's job 2 ending unlinked the other's job 2 hostfile under its running mpirun.
TEST(ScriptFilesTest, AgentsOfOneHostNameWithDistinctStateDirectoriesKeepTheirOwnFiles) {
  TempDir tmp, state_a, state_b;
  const std::string saved = std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "";
  setenv("TMPDIR", tmp.path().c_str(), 1);
  ScriptFiles a("", AgentInstanceName("h1", state_a.path().string()));
  ScriptFiles b("", AgentInstanceName("h1", state_b.path().string()));
  ScriptFiles a_again("", AgentInstanceName("h1", state_a.path().string() + "/."));
  saved.empty() ? unsetenv("TMPDIR") : setenv("TMPDIR", saved.c_str(), 1);
  EXPECT_NE(a.PathOf(2), b.PathOf(2));
  EXPECT_EQ(a.PathOf(2), a_again.PathOf(2));  // a restarted agent finds its own files
  JobSpec spec_a{.job = 2, .env = {{"SLUICE_HOSTS", "h1:2"}}};
  JobSpec spec_b = spec_a;
  ASSERT_TRUE(a.PrepareHostfile(spec_a).ok());
  ASSERT_TRUE(b.PrepareHostfile(spec_b).ok());
  b.Remove(2);
  EXPECT_EQ(ReadFile(spec_a.env.at("SLUICE_HOSTFILE")), "h1\nh1\n");
  EXPECT_FALSE(ReadFile(spec_b.env.at("SLUICE_HOSTFILE")).has_value());
}

TEST(ScriptFilesTest, ASymlinkedDirectoryIsRefused) {
  TempDir dir;
  std::filesystem::create_directory(dir.path() / "real");
  std::filesystem::create_directory_symlink(dir.path() / "real", dir.path() / "link");
  ScriptFiles scripts((dir.path() / "link").string(), "h1");
  wire::Launch launch{.job = 1, .argv = {"x"}, .script = "echo\n"};
  JobSpec spec{.job = 1};
  Status status = scripts.Prepare(launch, spec);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
}

TEST(PeekReaderTest, LastLinesOffsetsAndRefusals) {
  TempDir dir;
  const std::string path = (dir.path() / "out").string();
  ASSERT_TRUE(WriteFile(path, "one\ntwo\nthree\n"));
  const PeekTarget target{.path = path};
  wire::PeekResult tail = ReadPeek({.id = 1, .job = 3, .lines = 2}, &target);
  EXPECT_TRUE(tail.error.empty()) << tail.error;
  EXPECT_EQ(tail.text, "two\nthree\n");
  EXPECT_EQ(tail.offset, 4);
  EXPECT_EQ(tail.size, 14);
  wire::PeekResult from = ReadPeek({.id = 2, .job = 3, .offset = 8}, &target);
  EXPECT_EQ(from.text, "three\n");
  EXPECT_FALSE(ReadPeek({.id = 3, .job = 3}, nullptr).error.empty());
  const PeekTarget none{};
  EXPECT_FALSE(ReadPeek({.id = 4, .job = 3}, &none).error.empty());
  // A symlink in place of the output file is not followed.
  std::filesystem::create_symlink(path, dir.path() / "link");
  const PeekTarget link{.path = (dir.path() / "link").string()};
  EXPECT_FALSE(ReadPeek({.id = 5, .job = 3}, &link).error.empty());
}

}  // namespace
}  // namespace sluice::agent
