#include "sim/jsonl_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/lublin_generator.h"
#include "sim/workload_writer.h"

namespace sluice::sim {
namespace {

std::vector<JobId> Ids(const Workload& workload) {
  std::vector<JobId> ids;
  for (const WorkloadJob& job : workload.jobs) ids.push_back(job.spec.id);
  return ids;
}

void ExpectSameJob(const WorkloadJob& got, const WorkloadJob& want) {
  EXPECT_EQ(got.spec.id, want.spec.id);
  EXPECT_EQ(got.spec.name, want.spec.name);
  EXPECT_EQ(got.spec.user, want.spec.user);
  EXPECT_EQ(got.spec.project, want.spec.project);
  EXPECT_EQ(got.spec.queue, want.spec.queue);
  EXPECT_EQ(got.spec.command, want.spec.command);
  EXPECT_EQ(got.spec.resreq, want.spec.resreq);
  EXPECT_EQ(got.spec.min_tasks, want.spec.min_tasks);
  EXPECT_EQ(got.spec.max_tasks, want.spec.max_tasks);
  EXPECT_EQ(got.spec.run_limit, want.spec.run_limit);
  EXPECT_EQ(got.spec.priority, want.spec.priority);
  EXPECT_EQ(got.spec.submit_time, want.spec.submit_time);
  EXPECT_EQ(got.spec.begin_time, want.spec.begin_time);
  EXPECT_EQ(got.spec.depend, want.spec.depend);
  EXPECT_EQ(got.spec.exclusive, want.spec.exclusive);
  EXPECT_EQ(got.spec.hold, want.spec.hold);
  EXPECT_EQ(got.runtime, want.runtime);
  EXPECT_EQ(got.cancel_at, want.cancel_at);
}

TEST(JsonlReaderTest, ReadsEveryKey) {
  const std::string text =
      R"({"id": 7, "submit": 120, "user": "alice", "project": "p1", "queue": "normal", )"
      R"("tasks": 4, "resreq": "select[type==linux] rusage[mem=2000] span[ptile=2]", )"
      R"("runtime": 300, "run_limit": 600, "priority": -3, "begin": 0, "depend": "", )"
      R"("exclusive": true, "hold": true, "cancel_at": 900, "name": "sim", "command": "./a"})";
  Result<Workload> workload = ParseJsonl(text, "w.jsonl", {});
  ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
  ASSERT_EQ(workload->jobs.size(), 1u);
  const WorkloadJob& job = workload->jobs[0];
  EXPECT_EQ(job.spec.id, 7);
  EXPECT_EQ(job.spec.submit_time, 120);
  EXPECT_EQ(job.spec.user, "alice");
  EXPECT_EQ(job.spec.project, "p1");
  EXPECT_EQ(job.spec.queue, "normal");
  EXPECT_EQ(job.spec.min_tasks, 4);
  EXPECT_EQ(job.spec.max_tasks, 4);
  EXPECT_EQ(job.spec.resreq, "select[type==linux] rusage[mem=2000] span[ptile=2]");
  EXPECT_EQ(job.runtime, 300);
  EXPECT_EQ(job.spec.run_limit, 600);
  EXPECT_EQ(job.spec.priority, -3);
  EXPECT_TRUE(job.spec.exclusive);
  EXPECT_TRUE(job.spec.hold);
  EXPECT_EQ(job.cancel_at, 900);
  EXPECT_EQ(job.spec.name, "sim");
  EXPECT_EQ(job.spec.command, "./a");
  EXPECT_EQ(job.line, 1);
  EXPECT_EQ(workload->procs, 0);
  EXPECT_EQ(workload->skipped, 0);
}

TEST(JsonlReaderTest, Defaults) {
  struct Case {
    std::string_view name;
    std::string line;
    int32_t want_min;
    int32_t want_max;
    bool want_run_limit;
    bool want_cancel_at;
  };
  const std::vector<Case> cases = {
      {"only required keys", R"({"id": 1, "submit": 0, "runtime": 5})", 1, 1, false, false},
      {"null run_limit and cancel_at",
       R"({"id": 1, "submit": 0, "runtime": 5, "run_limit": null, "cancel_at": null})", 1, 1, false,
       false},
      {"run_limit 0 is kept", R"({"id": 1, "submit": 0, "runtime": 5, "run_limit": 0})", 1, 1, true,
       false},
      {"min and max", R"({"id": 1, "submit": 0, "runtime": 5, "min_tasks": 2, "max_tasks": 6})", 2,
       6, false, false},
      {"min alone sets max", R"({"id": 1, "submit": 0, "runtime": 5, "min_tasks": 3})", 3, 3, false,
       false},
      {"max alone keeps min 1", R"({"id": 1, "submit": 0, "runtime": 5, "max_tasks": 3})", 1, 3,
       false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Workload> workload = ParseJsonl(c.line, "w.jsonl", {});
    ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
    ASSERT_EQ(workload->jobs.size(), 1u);
    const WorkloadJob& job = workload->jobs[0];
    EXPECT_EQ(job.spec.min_tasks, c.want_min);
    EXPECT_EQ(job.spec.max_tasks, c.want_max);
    EXPECT_EQ(job.spec.run_limit.has_value(), c.want_run_limit);
    EXPECT_EQ(job.cancel_at.has_value(), c.want_cancel_at);
    EXPECT_EQ(job.spec.queue, "");
  }
}

TEST(JsonlReaderTest, ErrorsNameTheLineAndField) {
  const std::string ok = R"({"id": 1, "submit": 0, "runtime": 5})";
  struct Case {
    std::string_view name;
    std::string text;
    std::string want_prefix;  // `<file>:<line>: <field>`
  };
  const std::vector<Case> cases = {
      {"invalid json", ok + "\n{\"id\": 2,", "w.jsonl:2: json"},
      {"trailing garbage", ok + "\n" + ok + " x", "w.jsonl:2: json"},
      {"not an object", "[1, 2]", "w.jsonl:1: json"},
      {"number overflow", R"({"id": 1, "submit": 0, "runtime": 26e859})", "w.jsonl:1: json"},
      {"unknown key", R"({"id": 1, "submit": 0, "runtime": 5, "walltime": 9})",
       "w.jsonl:1: walltime"},
      {"id is a string", R"({"id": "7", "submit": 0, "runtime": 5})", "w.jsonl:1: id"},
      {"id is a float", R"({"id": 7.0, "submit": 0, "runtime": 5})", "w.jsonl:1: id"},
      {"id is 0", R"({"id": 0, "submit": 0, "runtime": 5})", "w.jsonl:1: id"},
      {"id too large", R"({"id": 18446744073709551615, "submit": 0, "runtime": 5})",
       "w.jsonl:1: id"},
      {"missing id", R"({"submit": 0, "runtime": 5})", "w.jsonl:1: id"},
      {"missing submit", R"({"id": 1, "runtime": 5})", "w.jsonl:1: submit"},
      {"missing runtime", R"({"id": 1, "submit": 0})", "w.jsonl:1: runtime"},
      {"negative submit", R"({"id": 1, "submit": -1, "runtime": 5})", "w.jsonl:1: submit"},
      {"negative runtime", R"({"id": 1, "submit": 0, "runtime": -5})", "w.jsonl:1: runtime"},
      {"null runtime", R"({"id": 1, "submit": 0, "runtime": null})", "w.jsonl:1: runtime"},
      {"duplicate id", ok + "\n" + R"({"id": 2, "submit": 0, "runtime": 5})" + "\n" + ok,
       "w.jsonl:3: id"},
      {"tasks 0", R"({"id": 1, "submit": 0, "runtime": 5, "tasks": 0})", "w.jsonl:1: tasks"},
      {"tasks above int32", R"({"id": 1, "submit": 0, "runtime": 5, "tasks": 4294967296})",
       "w.jsonl:1: tasks"},
      {"min_tasks 0", R"({"id": 1, "submit": 0, "runtime": 5, "min_tasks": 0})",
       "w.jsonl:1: min_tasks"},
      {"min > max", R"({"id": 1, "submit": 0, "runtime": 5, "min_tasks": 4, "max_tasks": 2})",
       "w.jsonl:1: min_tasks"},
      {"tasks with min_tasks",
       R"({"id": 1, "submit": 0, "runtime": 5, "tasks": 2, "min_tasks": 2})", "w.jsonl:1: tasks"},
      {"negative run_limit", R"({"id": 1, "submit": 0, "runtime": 5, "run_limit": -1})",
       "w.jsonl:1: run_limit"},
      {"string run_limit", R"({"id": 1, "submit": 0, "runtime": 5, "run_limit": "1h"})",
       "w.jsonl:1: run_limit"},
      {"string cancel_at", R"({"id": 1, "submit": 0, "runtime": 5, "cancel_at": "soon"})",
       "w.jsonl:1: cancel_at"},
      {"priority above int32", R"({"id": 1, "submit": 0, "runtime": 5, "priority": 3000000000})",
       "w.jsonl:1: priority"},
      {"negative begin", R"({"id": 1, "submit": 0, "runtime": 5, "begin": -10})",
       "w.jsonl:1: begin"},
      {"depend not supported", R"j({"id": 1, "submit": 0, "runtime": 5, "depend": "done(3)"})j",
       "w.jsonl:1: depend"},
      {"exclusive not a boolean", R"({"id": 1, "submit": 0, "runtime": 5, "exclusive": 1})",
       "w.jsonl:1: exclusive"},
      {"hold not a boolean", R"({"id": 1, "submit": 0, "runtime": 5, "hold": "no"})",
       "w.jsonl:1: hold"},
      {"user not a string", R"({"id": 1, "submit": 0, "runtime": 5, "user": 12})",
       "w.jsonl:1: user"},
      {"resreq not a string", R"({"id": 1, "submit": 0, "runtime": 5, "resreq": null})",
       "w.jsonl:1: resreq"},
      {"line numbers count blank lines", ok + "\n\n   \n" + R"({"id": 2, "submit": 0})",
       "w.jsonl:4: runtime"},
      {"first bad key in alphabetical order",
       R"({"id": 1, "submit": 0, "runtime": 5, "user": 1, "hold": 2})", "w.jsonl:1: hold"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Workload> workload = ParseJsonl(c.text, "w.jsonl", {});
    ASSERT_FALSE(workload.has_value());
    EXPECT_EQ(workload.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(workload.error().message().rfind(c.want_prefix + ": ", 0), 0u)
        << workload.error().message();
  }
}

// `gpus` is shorthand for a gpu[] section of resreq (docs/workload-format.md).
TEST(JsonlReaderTest, GpusBecomeAGpuSection) {
  struct Case {
    std::string_view name;
    std::string keys;  // added to a valid line
    std::string want_resreq;
  };
  const std::vector<Case> cases = {
      {"count alone", R"("gpus": 2)", "gpu[num=2]"},
      {"count after a request", R"("gpus": 1, "resreq": "select[type==gpu]")",
       "select[type==gpu] gpu[num=1]"},
      {"-gpu text", R"("gpus": "num=1/task:gmodel=A100")", "gpu[num=1/task:gmodel=A100]"},
      {"-gpu text after a request", R"("gpus": "num=2:glink=yes", "resreq": "rusage[mem=10]")",
       "rusage[mem=10] gpu[num=2:glink=yes]"},
      {"bsub -gpu -", R"("gpus": "-")", "gpu[]"},
      {"blank request", R"("gpus": 4, "resreq": "  ")", "gpu[num=4]"},
      // resreq's own error is the core's to report at submission, as without `gpus`.
      {"bad request left to the core", R"("gpus": 1, "resreq": "select[")", "select[ gpu[num=1]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string line = R"({"id": 1, "submit": 0, "runtime": 5, )" + c.keys + "}";
    Result<Workload> workload = ParseJsonl(line, "w.jsonl", {});
    ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
    EXPECT_EQ(workload->jobs.at(0).spec.resreq, c.want_resreq);
  }
}

TEST(JsonlReaderTest, BadGpusNameTheKey) {
  struct Case {
    std::string_view name;
    std::string keys;
    std::string want_prefix;  // `<file>:<line>: gpus: ...`
  };
  const std::vector<Case> cases = {
      {"zero", R"("gpus": 0)", "w.jsonl:1: gpus: "},
      {"more than a host can have", R"("gpus": 65)", "w.jsonl:1: gpus: "},
      {"a float", R"("gpus": 1.5)", "w.jsonl:1: gpus: "},
      {"a boolean", R"("gpus": true)", "w.jsonl:1: gpus: "},
      {"null", R"("gpus": null)", "w.jsonl:1: gpus: "},
      {"an empty string", R"("gpus": "")", "w.jsonl:1: gpus: "},
      {"a bracket", R"("gpus": "num=1] select[a")", "w.jsonl:1: gpus: "},
      // Columns count in the string: `num=x` has its bad value at column 5.
      {"a bad value", R"("gpus": "num=x")", "w.jsonl:1: gpus: column 5: "},
      {"an unknown key", R"("gpus": "count=2")", "w.jsonl:1: gpus: column 1: "},
      {"a request with gpu[]", R"("gpus": 1, "resreq": "gpu[num=2]")", "w.jsonl:1: gpus: "},
      {"a compound", R"("gpus": 1, "resreq": "1*{select[a]} + 2*{select[b]}")",
       "w.jsonl:1: gpus: "},
      {"alternatives", R"("gpus": 1, "resreq": "{select[a]} || {select[b]}")", "w.jsonl:1: gpus: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string text = R"({"id": 1, "submit": 0, "runtime": 5, )" + c.keys + "}";
    Result<Workload> workload = ParseJsonl(text, "w.jsonl", {});
    ASSERT_FALSE(workload.has_value());
    EXPECT_EQ(workload.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(workload.error().message().rfind(c.want_prefix, 0), 0u) << workload.error().message();
  }
}

TEST(JsonlReaderTest, DependenciesAreCheckedAndKept) {
  Result<Workload> ok = ParseJsonl(
      "{\"id\": 3, \"submit\": 0, \"runtime\": 5}\n"
      "{\"id\": 4, \"submit\": 0, \"runtime\": 5, \"depend\": \"done(3) && !exit(3)\"}\n",
      "w.jsonl", {});
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_EQ(ok->jobs[1].spec.depend, "done(3) && !exit(3)");
  struct Case {
    std::string_view text;
    std::string_view message;
  };
  const Case cases[] = {
      {R"j({"id": 1, "submit": 0, "runtime": 5, "depend": "done(3"})j",
       "w.jsonl:1: depend: column 7: expected ')'"},
      {R"j({"id": 1, "submit": 0, "runtime": 5, "depend": "done(3)"})j",
       "w.jsonl:1: depend: no job 3 in the workload"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Result<Workload> workload = ParseJsonl(c.text, "w.jsonl", {});
    ASSERT_FALSE(workload.has_value());
    EXPECT_EQ(workload.error().message(), c.message);
  }
}

TEST(JsonlReaderTest, ReleaseAtGoesWithHold) {
  Result<Workload> ok = ParseJsonl(
      R"({"id": 1, "submit": 0, "runtime": 5, "hold": true, "release_at": 30})", "w.jsonl", {});
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_EQ(ok->jobs[0].release_at, 30);
  Result<Workload> bad =
      ParseJsonl(R"({"id": 1, "submit": 0, "runtime": 5, "release_at": 30})", "w.jsonl", {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "w.jsonl:1: release_at: expected hold: true with it");
}

TEST(JsonlReaderTest, BeginTimesAreRead) {
  Result<Workload> workload =
      ParseJsonl(R"({"id": 1, "submit": 0, "runtime": 5, "begin": 10})", "w.jsonl", {});
  ASSERT_TRUE(workload.has_value()) << workload.error().message();
  EXPECT_EQ(workload->jobs[0].spec.begin_time, 10);
}

TEST(JsonlReaderTest, StableSortAndMaxJobs) {
  const std::string text =
      "{\"id\": 1, \"submit\": 30, \"runtime\": 1}\n"
      "{\"id\": 2, \"submit\": 10, \"runtime\": 1}\n"
      "\n"
      "{\"id\": 3, \"submit\": 30, \"runtime\": 1}\n"
      "{\"id\": 4, \"submit\": 10, \"runtime\": 1}\n";
  Result<Workload> all = ParseJsonl(text, "w.jsonl", {});
  ASSERT_TRUE(all.has_value()) << all.error().ToString();
  EXPECT_EQ(Ids(*all), (std::vector<JobId>{2, 4, 1, 3}));
  EXPECT_EQ(all->jobs[2].line, 1);
  EXPECT_EQ(all->jobs[3].line, 4);
  Result<Workload> three = ParseJsonl(text, "w.jsonl", {.max_jobs = 3});
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ(Ids(*three), (std::vector<JobId>{2, 4, 1}));
  EXPECT_TRUE(ParseJsonl("", "w.jsonl", {}).has_value());
}

TEST(JsonlReaderTest, WriteJsonlRoundTrip) {
  Workload rich;
  WorkloadJob a;
  a.spec.id = 3;
  a.spec.submit_time = 50;
  a.spec.user = "al\"ice\\";
  a.spec.project = "p\n1\x01";
  a.spec.queue = "normal";
  a.spec.min_tasks = 2;
  a.spec.max_tasks = 8;
  a.spec.resreq = "select[type==linux] span[ptile=2]";
  a.spec.run_limit = 0;
  a.spec.priority = -4;
  a.spec.exclusive = true;
  a.spec.hold = true;
  a.spec.name = "n\xc3\xa9";
  a.spec.command = "echo \t hi";
  a.runtime = 0;
  a.cancel_at = 70;
  WorkloadJob b;
  b.spec.id = 1;
  b.spec.submit_time = 60;
  b.runtime = 9;
  rich.jobs = {a, b};
  const std::vector<Workload> workloads = {
      rich, GenerateLublin({.jobs = 500, .procs = 100, .load = 0.9, .seed = 11})};
  for (const Workload& original : workloads) {
    SCOPED_TRACE(original.jobs.size());
    Result<Workload> parsed = ParseJsonl(WriteJsonl(original), "w.jsonl", {});
    ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
    ASSERT_EQ(parsed->jobs.size(), original.jobs.size());
    for (size_t i = 0; i < original.jobs.size(); ++i) {
      ExpectSameJob(parsed->jobs[i], original.jobs[i]);
      EXPECT_EQ(parsed->jobs[i].line, static_cast<int64_t>(i + 1));
    }
  }
}

TEST(JsonlReaderTest, WriteJsonlFormat) {
  Workload workload;
  WorkloadJob job;
  job.spec.id = 7;
  job.spec.submit_time = 120;
  job.spec.user = "alice";
  job.spec.min_tasks = 4;
  job.spec.max_tasks = 4;
  job.spec.run_limit = 600;
  job.runtime = 300;
  workload.jobs = {job};
  EXPECT_EQ(WriteJsonl(workload),
            "{\"id\": 7, \"submit\": 120, \"user\": \"alice\", \"tasks\": 4, \"runtime\": 300, "
            "\"run_limit\": 600}\n");
}

TEST(JsonlReaderTest, ReadJsonlFile) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / "w.jsonl").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << "{\"id\": 1, \"submit\": 0, \"runtime\": 5}\n{\"id\": 1, \"submit\": 0, \"runtime\": "
           "5}\n";
  }
  Result<Workload> duplicate = ReadJsonl(path, {});
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_EQ(duplicate.error().message().rfind(path + ":2: id: ", 0), 0u)
      << duplicate.error().message();
  Result<Workload> missing = ReadJsonl(path + ".missing", {});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sluice::sim
