// sbatch's and bsub's options as the clients send them (docs/compat.md): what Sluice is asked
// to run, and clear refusals.
#include <gtest/gtest.h>

#include "client/compat/bsub_request.h"
#include "client/compat/env_export.h"
#include "client/compat/memory.h"
#include "client/compat/sbatch_request.h"

namespace sluice::client::compat {
namespace {

constexpr int64_t kNow = 1796425873;

TEST(SbatchRequestTest, ToilsAndSnakemakesCommandLinesMap) {
  const std::vector<std::string> toil = {"-J", "toil_job_0_None", "--export=ALL,OMP_NUM_THREADS=1",
                                         "--mem=96", "--cpus-per-task=1", "-o", "out.%j.log",
                                         "--wrap=_toil_worker hello"};
  Result<SbatchCommandLine> line = ParseSbatchArgs(toil, kNow);
  ASSERT_TRUE(line.has_value()) << line.error().message();
  EXPECT_EQ(line->request.wrap, "_toil_worker hello");
  EXPECT_EQ(line->request.export_spec, "ALL,OMP_NUM_THREADS=1");
  Result<SubmitFlags> flags = ToSubmitFlags(line->request, "root");
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(flags->name, "toil_job_0_None");
  EXPECT_EQ(flags->resreq, "rusage[mem=96]");
  EXPECT_EQ(flags->output, "out.%j.log");

  const std::vector<std::string> snakemake = {"-J", "snakejob_a_2", "-p", "batch", "-t", "5",
                                              "--mem", "100", "--cpus-per-task=2", "-D", "/w",
                                              "--wrap=python3 -m snakemake"};
  line = ParseSbatchArgs(snakemake, kNow);
  ASSERT_TRUE(line.has_value()) << line.error().message();
  flags = ToSubmitFlags(line->request, "root");
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(flags->queue, "batch");
  EXPECT_EQ(flags->run_limit, "300s");
  EXPECT_EQ(flags->tasks, "2");
  EXPECT_EQ(flags->resreq, "span[hosts=1] rusage[mem=50]");  // one task: one host; --mem per host
  EXPECT_EQ(flags->cwd, "/w");
}

TEST(SbatchRequestTest, BadValuesAndUnsupportedOptionsAreRefused) {
  struct Case {
    std::string_view name;
    std::vector<std::string> args;
    StatusCode code;
  };
  const Case cases[] = {
      {"bad time", {"--time=abc", "x.sh"}, StatusCode::kInvalidArgument},
      {"unknown option", {"--bogus", "x.sh"}, StatusCode::kInvalidArgument},
      {"bad memory", {"--mem=4X", "x.sh"}, StatusCode::kInvalidArgument},
      {"constraint", {"--constraint=avx", "x.sh"}, StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<SbatchCommandLine> line = ParseSbatchArgs(c.args, kNow);
    ASSERT_FALSE(line.has_value());
    EXPECT_EQ(line.error().code(), c.code);
  }
}

TEST(BsubRequestTest, ToilsCommandLineReservesItsMemory) {
  const std::vector<std::string> toil = {"-cwd", ".", "-J", "toil_job_0", "-R",
                                         "select[mem>100MB] rusage[mem=100MB]", "-M", "100MB",
                                         "-n", "1", "-o", "o.%J.log", "_toil_worker hello"};
  Result<BsubCommandLine> line = ParseBsubArgs(toil, kNow);
  ASSERT_TRUE(line.has_value()) << line.error().message();
  ASSERT_EQ(line->operands.size(), 1u);
  EXPECT_EQ(line->operands[0], "_toil_worker hello");
  Result<SubmitFlags> flags = ToSubmitFlags(line->request);
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(flags->name, "toil_job_0");
  EXPECT_EQ(flags->tasks, "1");
  EXPECT_EQ(flags->resreq, "select[mem>100MB] rusage[mem=100MB]");  // reserves mem already
}

TEST(BsubRequestTest, InteractiveFormsAreReadAndTheSshAndX11OnesRefused) {
  const auto interactive = [](const char* option) {
    const std::vector<std::string> args = {option, "-n", "2", "hostname"};
    Result<BsubCommandLine> line = ParseBsubArgs(args, kNow);
    return line ? line->request.interactive : BsubInteractive::kNo;
  };
  EXPECT_EQ(interactive("-I"), BsubInteractive::kPlain);
  EXPECT_EQ(interactive("-Ip"), BsubInteractive::kPty);
  EXPECT_EQ(interactive("-Is"), BsubInteractive::kPty);
  const std::vector<std::string> plain = {"hostname"};
  EXPECT_EQ(ParseBsubArgs(plain, kNow)->request.interactive, BsubInteractive::kNo);
  for (const char* refused : {"-IS", "-ISp", "-ISs", "-IX"}) {
    const std::vector<std::string> args = {refused, "hostname"};
    Result<BsubCommandLine> line = ParseBsubArgs(args, kNow);
    ASSERT_FALSE(line.has_value()) << refused;
    EXPECT_EQ(line.error().code(), StatusCode::kFailedPrecondition);
  }
  // Only the command line makes a job interactive, as only it can wait (-K).
  BsubRequest request;
  const std::vector<std::string> directive = {"-Is"};
  EXPECT_FALSE(ApplyBsubDirective(directive, kNow, request).ok());
}

TEST(MemoryTest, UnitsOfBothDialects) {
  EXPECT_EQ(ParseMemoryMb("4G", MemoryDialect::kSlurm).value(), 4096);
  EXPECT_EQ(ParseMemoryMb("100", MemoryDialect::kSlurm).value(), 100);
  EXPECT_EQ(ParseMemoryMb("105MB", MemoryDialect::kLsf).value(), 105);
  EXPECT_EQ(ParseMemoryMb("1.5GB", MemoryDialect::kLsf).value(), 1536);
  EXPECT_FALSE(ParseMemoryMb("4Q", MemoryDialect::kSlurm).has_value());
}

TEST(EnvExportTest, SlurmExportBuildsTheJobsEnvironment) {
  const Environment caller = {{"HOME", "/root"}, {"SLURM_CONF", "x"}, {"PATH", "/bin"}};
  Result<Environment> all = ResolveSlurmExport("ALL,OMP_NUM_THREADS=1", caller);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->at("HOME"), "/root");
  EXPECT_EQ(all->at("OMP_NUM_THREADS"), "1");
  Result<Environment> none = ResolveSlurmExport("NONE", caller);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->count("HOME"), 0u);
  EXPECT_EQ(none->count("SLURM_CONF"), 1u);
  Result<Environment> listed = ResolveSlurmExport("PATH,X=2", caller);
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(*listed, (Environment{{"PATH", "/bin"}, {"SLURM_CONF", "x"}, {"X", "2"}}));
  EXPECT_FALSE(ResolveSlurmExport("ALL,1BAD=x", caller).has_value());
}

}  // namespace
}  // namespace sluice::client::compat
