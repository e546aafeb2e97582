// Each job's private TMPDIR on a host (`sluice agent --job-tmpdir`): made for the job's
// account, refused when something else holds its name, removed with what is in it (links
// removed, not followed), and swept at start for jobs that no longer run.
#include "agent/job_tmpdir.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

namespace fs = std::filesystem;
using ::sluice::testing::ReadFile;
using ::sluice::testing::TempDir;
using ::sluice::testing::WriteFile;

std::string Me() {
  const passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : "root";
}

TEST(JobTmpDirsTest, OffWithoutABase) {
  JobTmpDirs dirs("");
  EXPECT_FALSE(dirs.enabled());
  EXPECT_TRUE(dirs.EnsureBase().ok());
}

TEST(JobTmpDirsTest, MadePrivateForTheJobAndRemovedWithItsContentsButNotWhatLinksPointTo) {
  TempDir tmp;
  JobTmpDirs dirs((tmp.path() / "base/").string());  // a trailing slash is not doubled
  Result<std::string> dir = dirs.Prepare(42, Me());
  ASSERT_TRUE(dir.has_value()) << dir.error().message();
  EXPECT_EQ(*dir, (tmp.path() / "base" / "42.tmpdir").string());
  struct stat st {};
  ASSERT_EQ(stat(dir->c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, geteuid());
  // A second use (a step of the same job) finds the same directory and what is in it.
  ASSERT_TRUE(WriteFile(fs::path(*dir) / "a", "1"));
  Result<std::string> again = dirs.Prepare(42, Me());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *dir);
  EXPECT_EQ(ReadFile(fs::path(*dir) / "a"), "1");

  const fs::path outside = tmp.path() / "outside";
  fs::create_directories(outside);
  ASSERT_TRUE(WriteFile(outside / "keep", "k"));
  fs::create_directories(fs::path(*dir) / "sub" / "deeper");
  ASSERT_TRUE(WriteFile(fs::path(*dir) / "sub" / "deeper" / "f", "x"));
  fs::create_directory_symlink(outside, fs::path(*dir) / "sub" / "link");
  dirs.Remove(42);
  dirs.Reap(/*wait=*/true);
  EXPECT_FALSE(fs::exists(*dir));
  EXPECT_EQ(ReadFile(outside / "keep"), "k");
  dirs.Remove(42);  // nothing left: nothing happens
  dirs.Reap(true);
}

TEST(JobTmpDirsTest, ANameHeldByALinkOrAFileIsRefused) {
  TempDir tmp;
  JobTmpDirs dirs(tmp.path().string());
  fs::create_directories(tmp.path() / "elsewhere");
  fs::create_directory_symlink(tmp.path() / "elsewhere", tmp.path() / "7.tmpdir");
  Result<std::string> linked = dirs.Prepare(7, Me());
  ASSERT_FALSE(linked.has_value());
  EXPECT_NE(linked.error().message().find("7.tmpdir"), std::string::npos)
      << linked.error().message();
  ASSERT_TRUE(WriteFile(tmp.path() / "8.tmpdir", ""));
  EXPECT_FALSE(dirs.Prepare(8, Me()).has_value());
}

TEST(JobTmpDirsTest, TheSweepAtStartKeepsOnlyTheRunningJobsDirectories) {
  TempDir tmp;
  JobTmpDirs dirs(tmp.path().string());
  ASSERT_TRUE(dirs.Prepare(1, Me()).has_value());
  ASSERT_TRUE(dirs.Prepare(2, Me()).has_value());
  fs::create_directories(tmp.path() / "not-a-job");
  dirs.RemoveStale([](int64_t job) { return job == 2; });
  dirs.Reap(true);
  EXPECT_FALSE(fs::exists(tmp.path() / "1.tmpdir"));
  EXPECT_TRUE(fs::exists(tmp.path() / "2.tmpdir"));
  EXPECT_TRUE(fs::exists(tmp.path() / "not-a-job"));
}

// As root: the directory is the job account's, and its removal runs as that account, so a
// directory the job made unreadable to others is still emptied.
TEST(JobTmpDirsTest, AsRootTheDirectoryIsTheAccountsAndItsOwnerEmptiesIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const passwd* nobody = getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  TempDir tmp;  // 0700 root: the job's account must be able to reach its directory
  fs::permissions(tmp.path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  JobTmpDirs dirs((tmp.path() / "jobs").string());
  Result<std::string> dir = dirs.Prepare(5, "nobody");
  ASSERT_TRUE(dir.has_value()) << dir.error().message();
  struct stat st {};
  ASSERT_EQ(stat(dir->c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody->pw_uid);
  ASSERT_EQ(stat((tmp.path() / "jobs").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0711u);
  const fs::path sub = fs::path(*dir) / "private";
  fs::create_directories(sub);
  ASSERT_TRUE(WriteFile(sub / "f", "x"));
  ASSERT_EQ(chown(sub.c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  ASSERT_EQ(chown((sub / "f").c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  ASSERT_EQ(chmod(sub.c_str(), 0700), 0);
  dirs.Remove(5);
  dirs.Reap(true);
  EXPECT_FALSE(fs::exists(*dir));
  // Another account's directory under the job's name is refused.
  ASSERT_TRUE(dirs.Prepare(6, "root").has_value());
  EXPECT_FALSE(dirs.Prepare(6, "nobody").has_value());
}

}  // namespace
}  // namespace sluice::agent
