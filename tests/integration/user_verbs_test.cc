// Loopback integration of the user's daily verbs (SPEC §13): job scripts with #SLUICE, #BSUB
// and #SBATCH directives run with the flags they set, from the copy stored at submission
// (R-UX-1); impossible jobs are refused with their cause, storing nothing and taking no id
// (R-UX-2); `jobs -l` (R-UX-4); `submit --wait` returns the job's exit code and `peek` shows
// the tail of a running job's output (R-UX-5).
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <sstream>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::ReadFile;
using testing::WriteFile;

constexpr char kCluster[] = R"(
hosts:
  - name: h[1-4]
    slots: 4
queues:
  - name: normal
    policy: fifo
  - name: short
    policy: fifo
)";

class UserVerbsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<Cluster>(DefaultClusterYaml(kCluster));
    std::string error;
    ASSERT_TRUE(cluster_->StartServer(&error)) << error;
    for (const char* name : {"h1", "h2", "h3", "h4"}) cluster_->StartAgent(name, 4);
    ASSERT_TRUE(Eventually([&] {
      json hosts = cluster_->Get("/v1/hosts");
      if (!hosts.is_array()) return false;
      int ok = 0;
      for (const json& h : hosts) ok += h.value("state", "") == "ok" ? 1 : 0;
      return ok == 4;
    })) << cluster_->Get("/v1/hosts").dump();
  }

  // Runs `submit --parsable ARGS...`; the job id or -1.
  int64_t Submit(std::vector<std::string> args) {
    args.insert(args.begin(), {"submit", "--parsable"});
    testing::ProcessResult r = cluster_->Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    try {
      return std::stoll(r.stdout_text);
    } catch (...) {
      ADD_FAILURE() << "not a job id: `" << r.stdout_text << "` " << r.stderr_text;
      return -1;
    }
  }

  std::string Script(const std::string& name, const std::string& text) {
    const std::filesystem::path path = cluster_->dir() / name;
    EXPECT_TRUE(WriteFile(path, text));
    return path.string();
  }

  std::string Out(const std::string& name) { return (cluster_->dir() / name).string(); }

  std::unique_ptr<Cluster> cluster_;
};

TEST_F(UserVerbsTest, ScriptsRunWithTheirDirectivesFromTheStoredCopy) {
  Cluster& c = *cluster_;
  const std::string sluice = Script("sluice.sh",
                                    "#SLUICE -n 2 -q short -J slname -W 10m\n"
                                    "#SLUICE -o " +
                                        Out("sl.%j") +
                                        "\n"
                                        "echo \"sluice $SLUICE_NTASKS $1 $2\"\n");
  const std::string bsub = Script("bsub.sh",
                                  "#!/bin/sh\n"
                                  "#BSUB -n 3\n"
                                  "#BSUB -q short\n"
                                  "#BSUB -W 5 -J bsname\n"
                                  "#BSUB -o " +
                                      Out("bs.%j") +
                                      "\n"
                                      "echo bsub $SLUICE_NTASKS\n");
  const std::string sbatch = Script("sbatch.sh",
                                    "#!/bin/bash\n"
                                    "# a comment\n"
                                    "#SBATCH --ntasks=4\n"
                                    "#SBATCH --partition=short\n"
                                    "#SBATCH --time=0:30 --job-name=sbname\n"
                                    "#SBATCH --output=" +
                                        Out("sb.%j") +
                                        "\n"
                                        "echo \"sbatch $SLUICE_NTASKS ${BASH_VERSION:+bash}\"\n"
                                        "#SBATCH --ntasks=9\n");
  const int64_t sl = Submit({sluice, "a", "b"});
  const int64_t bs = Submit({bsub});
  const int64_t sb = Submit({sbatch});
  // The command line wins over the directives.
  const int64_t cli = Submit({"-q", "normal", "-o", Out("cli.%j"), bsub});
  // The stored copy runs, whatever happens to the file after submission.
  const std::string edited = Script("edited.sh", "#!/bin/sh\n#SLUICE -H\necho original\n");
  const int64_t held = Submit({"-o", Out("ed.%j"), edited});
  Script("edited.sh", "#!/bin/sh\necho changed\n");
  // From standard input.
  testing::ProcessResult piped = testing::RunProcess(
      {"/bin/sh", "-c",
       std::string(sluice::testing::SluiceBinary()) + " submit --server " + c.url() +
           " --token alice-token --parsable -o " + Out("in.%j") + " < " + bsub},
      c.dir() / "cli", 60s);
  ASSERT_EQ(piped.exit_code, 0) << piped.stderr_text;
  const int64_t in = std::stoll(piped.stdout_text);
  ASSERT_EQ(c.Cli({"release", std::to_string(held)}).exit_code, 0);

  ASSERT_TRUE(c.WaitAllEnded({sl, bs, sb, cli, held, in}, 30s)) << c.Get("/v1/jobs").dump();
  const auto expect_job = [&](int64_t id, const char* queue, const char* name, int tasks,
                              int64_t limit) {
    SCOPED_TRACE(id);
    json job = c.Job(id);
    EXPECT_EQ(job["state"], "DONE") << job.dump();
    EXPECT_EQ(job["queue"], queue);
    EXPECT_EQ(job["name"], name);
    EXPECT_EQ(job["max_tasks"], tasks);
    EXPECT_EQ(job["run_limit"], limit);
  };
  expect_job(sl, "short", "slname", 2, 600);
  expect_job(bs, "short", "bsname", 3, 300);
  expect_job(sb, "short", "sbname", 4, 30);
  expect_job(cli, "normal", "bsname", 3, 300);
  EXPECT_EQ(ReadFile(Out("sl." + std::to_string(sl))), "sluice 2 a b\n");
  EXPECT_EQ(ReadFile(Out("bs." + std::to_string(bs))), "bsub 3\n");
  EXPECT_EQ(ReadFile(Out("sb." + std::to_string(sb))), "sbatch 4 bash\n");
  EXPECT_EQ(ReadFile(Out("cli." + std::to_string(cli))), "bsub 3\n");
  EXPECT_EQ(ReadFile(Out("ed." + std::to_string(held))), "original\n");
  EXPECT_EQ(ReadFile(Out("in." + std::to_string(in))), "bsub 3\n");
  EXPECT_EQ(c.Job(in)["command"], "stdin");  // named by its -J directive

  // A directive that cannot be read is refused, naming its line; nothing is submitted.
  const std::string bad = Script("bad.sh", "#!/bin/sh\n#SBATCH -n 1\n#SBATCH --time=abc\necho\n");
  testing::ProcessResult refused = c.Cli({"submit", bad});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.stderr_text.find("bad.sh:3: #SBATCH --time=abc"), std::string::npos)
      << refused.stderr_text;
  EXPECT_EQ(c.Get("/v1/jobs").size(), 6u);

  // `jobs -l`: labelled lines with the script and the run limit.
  testing::ProcessResult long_view = c.Cli({"jobs", "-l", std::to_string(sb)});
  ASSERT_EQ(long_view.exit_code, 0) << long_view.stderr_text;
  for (std::string_view want :
       {"Job " + std::to_string(sb) + "\n", std::string("  Name:"), std::string("sbname"),
        std::string("(script, "), std::string("  Run limit:"), std::string("0:00:30 (30 s)"),
        std::string("  Exit code:"), std::string("  Queue:")}) {
    EXPECT_NE(long_view.stdout_text.find(want), std::string::npos) << want << "\n"
                                                                   << long_view.stdout_text;
  }
}

// Issue 47.7: cancel by name, state and user, as scancel -n/-t/-u and bkill -u; without -u a
// filter selects the caller's own jobs only.
TEST_F(UserVerbsTest, CancelByNameStateAndUserTouchesOnlyTheSelectedJobs) {
  const int64_t x1 = Submit({"-H", "-J", "x", "--", "true"});
  const int64_t x2 = Submit({"-H", "-J", "x", "--", "true"});
  const int64_t y = Submit({"-H", "-J", "y", "--", "true"});
  testing::ProcessResult bob = cluster_->Cli({"submit", "--parsable", "-H", "-J", "x", "--", "true"},
                                             "bob-token");
  ASSERT_EQ(bob.exit_code, 0) << bob.stderr_text;
  const int64_t bobs = std::stoll(bob.stdout_text);
  const auto state = [&](int64_t id) { return cluster_->JobState(id); };

  testing::ProcessResult r = cluster_->Cli({"cancel", "-J", "x"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "Job <" + std::to_string(x1) + "> is being cancelled\nJob <" +
                               std::to_string(x2) + "> is being cancelled\n");
  EXPECT_EQ(state(x1), "CANCELLED");
  EXPECT_EQ(state(x2), "CANCELLED");
  EXPECT_EQ(state(y), "HELD");
  EXPECT_EQ(state(bobs), "HELD");  // bob's job of that name is not alice's to cancel

  r = cluster_->Cli({"cancel", "-s", "HELD"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(state(y), "CANCELLED");
  EXPECT_EQ(state(bobs), "HELD");
  // Another user's jobs by -u: refused to alice, done by an administrator.
  r = cluster_->Cli({"cancel", "-u", "bob"});
  EXPECT_NE(r.exit_code, 0) << r.stdout_text;
  EXPECT_EQ(state(bobs), "HELD");
  r = cluster_->Cli({"cancel", "-u", "bob"}, "admin-token");
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(state(bobs), "CANCELLED");
  // Nothing left to match; no ids and no filter is a usage error; a user filter with a typo
  // is an error naming the configured users.
  r = cluster_->Cli({"cancel", "-s", "PENDING"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("no job matches"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(cluster_->Cli({"cancel"}).exit_code, 2);
  r = cluster_->Cli({"jobs", "-u", "alcie"});
  EXPECT_EQ(r.exit_code, 2) << r.stdout_text;
  EXPECT_NE(r.stderr_text.find("no user 'alcie'"), std::string::npos) << r.stderr_text;
  // `jobs` lists the caller's jobs; -u all everyone's (bjobs' habit, issue 47.7).
  r = cluster_->Cli({"jobs", "-o", "id,user"});
  EXPECT_EQ(r.stdout_text.find("bob"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("alice"), std::string::npos) << r.stdout_text;
  r = cluster_->Cli({"jobs", "-u", "all", "-o", "id,user"});
  EXPECT_NE(r.stdout_text.find("bob"), std::string::npos) << r.stdout_text;
  // -o: the fields asked for, in that order.
  r = cluster_->Cli({"jobs", "-o", "id,name,state,elapsed", std::to_string(x1)});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "ID  NAME  STATE      ELAPSED\n" + std::to_string(x1) +
                               "   x     CANCELLED  -\n");
  r = cluster_->Cli({"jobs", "-o", "id,colour"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("no job field 'colour'"), std::string::npos) << r.stderr_text;
}

TEST_F(UserVerbsTest, ImpossibleJobsAreRefusedWithoutTakingAnId) {
  Cluster& c = *cluster_;
  testing::ProcessResult refused = c.Cli({"submit", "-n", "100", "--", "true"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(refused.stderr_text.starts_with("Job not submitted: ")) << refused.stderr_text;
  EXPECT_NE(refused.stderr_text.find("100"), std::string::npos) << refused.stderr_text;
  EXPECT_NE(refused.stderr_text.find("16"), std::string::npos) << refused.stderr_text;
  EXPECT_TRUE(c.Get("/v1/jobs").empty());

  // A batch with one impossible job stores nothing and names the index.
  int status = 0;
  json batch = {
      {"jobs", json::array({{{"command", "true"}}, {{"command", "true"}, {"tasks", 100}}})}};
  json answer = c.Post("/v1/jobs/batch", batch, "alice-token", &status);
  EXPECT_EQ(status, 422) << answer.dump();
  EXPECT_EQ(answer["cause"]["index"], 1) << answer.dump();
  EXPECT_EQ(answer["cause"]["reason"], "UNSCHEDULABLE");
  EXPECT_TRUE(c.Get("/v1/jobs").empty());
  // A dependency on a job nobody submitted (issue 47.7: it took an id before it was refused).
  refused = c.Cli({"submit", "-w", "done(9999)", "--", "true"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.stderr_text.find("depend: no job 9999"), std::string::npos)
      << refused.stderr_text;
  answer = c.Post("/v1/jobs/batch",
                  {{"jobs", json::array({{{"command", "true"}},
                                         {{"command", "true"}, {"depend", "ended(77)"}}})}},
                  "alice-token", &status);
  EXPECT_EQ(status, 422) << answer.dump();
  EXPECT_EQ(answer["cause"]["reason"], "DEPENDENCY") << answer.dump();
  EXPECT_EQ(answer["cause"]["index"], 1) << answer.dump();

  // No id was consumed: the next job is job 1.
  const int64_t first = Submit({"--", "true"});
  EXPECT_EQ(first, 1);
  ASSERT_TRUE(c.WaitAllEnded({first}, 20s));
  EXPECT_EQ(c.Get("/v1/jobs").size(), 1u);
  // Counted with the jobs ended UNSCHEDULABLE.
  httplib::Client http(c.url());
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("sluice_unschedulable_total{queue=\"normal\"} 2"),
            std::string::npos);
}

// `submit -U NAME` (R-RSV-2) sends the job's reservation; one that does not exist is refused
// at submission, taking no id. A server without the field (before the controller's side of
// issue 42) refuses the field itself: the request is shown to carry it, the rest is skipped.
TEST_F(UserVerbsTest, SubmitWithAnUnknownReservationIsRefused) {
  Cluster& c = *cluster_;
  testing::ProcessResult refused = c.Cli({"submit", "-U", "nosuch", "--", "true"});
  EXPECT_EQ(refused.exit_code, 2) << refused.stderr_text;
  EXPECT_NE(refused.stderr_text.find("reservation"), std::string::npos) << refused.stderr_text;
  EXPECT_TRUE(c.Get("/v1/jobs").empty());
  EXPECT_NE(refused.stderr_text.find("no reservation named 'nosuch'"), std::string::npos)
      << refused.stderr_text;
  // The same from a script's directive.
  refused = c.Cli({"submit", Script("rsv.sh", "#!/bin/sh\n#SBATCH --reservation=nosuch\ntrue\n")});
  EXPECT_EQ(refused.exit_code, 2) << refused.stderr_text;
  EXPECT_NE(refused.stderr_text.find("no reservation named 'nosuch'"), std::string::npos)
      << refused.stderr_text;
}

TEST_F(UserVerbsTest, WaitReturnsTheExitCodeAndPeekShowsTheTail) {
  Cluster& c = *cluster_;
  testing::ProcessResult done = c.Cli({"submit", "--wait", "--", "true"});
  EXPECT_EQ(done.exit_code, 0) << done.stderr_text;
  EXPECT_NE(done.stdout_text.find("is submitted"), std::string::npos);
  EXPECT_EQ(c.Cli({"submit", "--wait", "--", "exit 3"}).exit_code, 3);
  // Killed at its run limit (SIGTERM): 128 + 15.
  testing::ProcessResult killed = c.Cli({"submit", "-K", "-W", "1s", "--", "sleep 30"});
  EXPECT_EQ(killed.exit_code, 143) << killed.stderr_text;

  const int64_t talker =
      Submit({"-o", Out("talk.%j"), "--", "for i in 1 2 3 4 5; do echo line$i; done; sleep 30"});
  ASSERT_TRUE(Eventually(
      [&] {
        auto text = ReadFile(Out("talk." + std::to_string(talker)));
        return c.JobState(talker) == "RUNNING" && text && text->ends_with("line5\n");
      },
      20s));
  testing::ProcessResult peek = c.Cli({"peek", std::to_string(talker), "-n", "2"});
  EXPECT_EQ(peek.exit_code, 0) << peek.stderr_text;
  EXPECT_EQ(peek.stdout_text, "line4\nline5\n");
  // Only the owner (or an admin) may peek; an ended job has nothing to peek at.
  EXPECT_NE(c.Cli({"peek", std::to_string(talker)}, "bob-token").exit_code, 0);
  ASSERT_EQ(c.Cli({"cancel", std::to_string(talker)}).exit_code, 0);
  ASSERT_TRUE(c.WaitAllEnded({talker}, 20s));
  EXPECT_EQ(c.Cli({"peek", std::to_string(talker)}).exit_code, 2);

  // One element of an array: ID[INDEX]; a range is refused.
  const int64_t array = Submit({"--array", "1-2", "-o", Out("el.%A_%a"), "--",
                                "echo element $SLUICE_ARRAY_INDEX; sleep 30"});
  const std::string second = std::to_string(array) + "[2]";
  testing::ProcessResult element;
  EXPECT_TRUE(Eventually(
      [&] {
        element = c.Cli({"peek", second});
        return element.exit_code == 0 && element.stdout_text == "element 2\n";
      },
      20s))
      << element.stdout_text << element.stderr_text;
  EXPECT_EQ(c.Cli({"peek", std::to_string(array) + "[1-2]"}).exit_code, 2);
  // `jobs ID` of an array lists its elements (issue 47.5), not the array as a running job.
  testing::ProcessResult listed = c.Cli({"jobs", std::to_string(array)});
  EXPECT_EQ(listed.exit_code, 0) << listed.stderr_text;
  EXPECT_NE(listed.stdout_text.find("\n" + second + " "), std::string::npos) << listed.stdout_text;
  EXPECT_EQ(listed.stdout_text.find("\n" + std::to_string(array) + "[1-2]"), std::string::npos)
      << listed.stdout_text;
  // Cancelling the waiting jobs leaves a running array alone (its elements run).
  (void)c.Cli({"cancel", "-s", "PENDING"});
  EXPECT_EQ(c.Job(array).value("state", ""), "RUNNING") << c.Job(array).dump();
  ASSERT_EQ(c.Cli({"cancel", std::to_string(array)}).exit_code, 0);
}

// Issue 47.7: `cancel --signal` (and scancel -s, bkill -s) sends a signal to the running job
// through its agent; the job goes on, and ends by itself later.
TEST_F(UserVerbsTest, ASignalReachesTheRunningJobWhichGoesOn) {
  Cluster& c = *cluster_;
  const std::string go = (c.dir() / "go").string();
  const int64_t id = Submit({"-o", Out("sig.%j"), "--",
                             "trap 'echo got-usr1' USR1; trap 'echo got-usr2' USR2; echo ready; "
                             "while [ ! -e " + go + " ]; do sleep 0.1; done"});
  const std::string text_id = std::to_string(id);
  // The trap's lines: the shell also reports its `sleep` killed by the signal (the whole job
  // gets it, as with bkill -s).
  const auto output = [&] {
    std::string got;
    std::istringstream lines(ReadFile(Out("sig." + text_id)).value_or(""));
    for (std::string line; std::getline(lines, line);) {
      if (line == "ready" || line.starts_with("got-")) got += line + "\n";
    }
    return got;
  };
  ASSERT_TRUE(Eventually(
      [&] { return c.JobState(id) == "RUNNING" && output().find("ready") != std::string::npos; },
      20s))
      << c.Logs();

  testing::ProcessResult r = c.Cli({"cancel", "--signal", "USR1", text_id});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "Job <" + text_id + "> is being signalled (SIGUSR1)\n");
  EXPECT_TRUE(Eventually([&] { return output().find("got-usr1") != std::string::npos; }, 20s))
      << output() << c.Logs();
  // scancel -s and bkill -s, as the drop-in commands (build/compat) with the user's token.
  const std::filesystem::path compat =
      std::filesystem::path(testing::SluiceBinary()).parent_path() / "compat";
  const auto drop_in = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"/usr/bin/env", "PATH=" + compat.string() + ":/usr/bin:/bin",
                               "SLUICE_SERVER=" + c.url(), "SLUICE_TOKEN=alice-token"});
    return testing::RunProcess(argv, c.dir() / "drop-in", 60s);
  };
  std::filesystem::create_directories(c.dir() / "drop-in");
  r = drop_in({"scancel", "--signal=USR2", text_id});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_TRUE(Eventually([&] { return output().find("got-usr2") != std::string::npos; }, 20s))
      << output();
  r = drop_in({"bkill", "-s", "USR1", text_id});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "Job <" + text_id + "> is being signaled\n");
  EXPECT_TRUE(Eventually([&] { return output().ends_with("got-usr2\ngot-usr1\n"); }, 20s))
      << output();
  EXPECT_EQ(drop_in({"scancel", "-s", "BOGUS", text_id}).exit_code, 1);
  // An empty signal is an error, not a cancel.
  EXPECT_EQ(drop_in({"scancel", "--signal=", text_id}).exit_code, 1);
  EXPECT_EQ(drop_in({"bkill", "-s", "", text_id}).exit_code, 255);
  EXPECT_EQ(c.Cli({"cancel", "--signal=", text_id}).exit_code, 2);
  EXPECT_EQ(c.JobState(id), "RUNNING");

  // Refused: another user's job, a signal that is none, a job that does not run.
  EXPECT_NE(c.Cli({"cancel", "--signal", "USR1", text_id}, "bob-token").exit_code, 0);
  r = c.Cli({"cancel", "--signal", "BOGUS", text_id});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("USR1, USR2"), std::string::npos) << r.stderr_text;
  const int64_t held = Submit({"-H", "--", "true"});
  EXPECT_NE(c.Cli({"cancel", "--signal", "USR1", std::to_string(held)}).exit_code, 0);
  EXPECT_EQ(c.JobState(held), "HELD");

  EXPECT_EQ(c.JobState(id), "RUNNING");
  ASSERT_TRUE(WriteFile(go, ""));
  ASSERT_TRUE(c.WaitAllEnded({id}, 20s));
  EXPECT_EQ(c.JobState(id), "DONE") << c.Job(id).dump();
  EXPECT_EQ(output(), "ready\ngot-usr1\ngot-usr2\ngot-usr1\n");
  ASSERT_EQ(c.Cli({"cancel", std::to_string(held)}).exit_code, 0);
}

}  // namespace
}  // namespace sluice::integration
