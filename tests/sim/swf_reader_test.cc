#include "sim/swf_reader.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/lublin_generator.h"
#include "sim/workload_writer.h"

namespace sluice::sim {
namespace {

// An 18-field SWF data line; fields not given are -1.
std::string Line(int64_t id, int64_t submit, int64_t runtime, int64_t allocated, int64_t requested,
                 int64_t requested_time, int64_t user = -1) {
  return std::to_string(id) + " " + std::to_string(submit) + " -1 " + std::to_string(runtime) +
         " " + std::to_string(allocated) + " -1 -1 " + std::to_string(requested) + " " +
         std::to_string(requested_time) + " -1 1 " + std::to_string(user) + " -1 -1 3 -1 -1 -1\n";
}

std::vector<JobId> Ids(const Workload& workload) {
  std::vector<JobId> ids;
  for (const WorkloadJob& job : workload.jobs) ids.push_back(job.spec.id);
  return ids;
}

constexpr std::string_view kHeader = "; MaxProcs: 8\n";

TEST(SwfReaderTest, LoadingRules) {
  struct Case {
    std::string_view name;
    std::string text;
    SwfOptions options;
    std::vector<JobId> want_ids;
    int64_t want_skipped = 0;
  };
  const std::vector<Case> cases = {
      {"keeps a valid job", std::string(kHeader) + Line(1, 0, 10, 2, 2, 20), {}, {1}, 0},
      {"comments and blank lines are not counted",
       std::string(kHeader) + "; a comment\n\n   \n  ; indented comment\n" +
           Line(1, 0, 10, 2, 2, 20),
       {},
       {1},
       0},
      {"skips a line with fewer than 9 fields",
       std::string(kHeader) + "2 0 -1 10 2 -1 -1 2\n" + Line(1, 0, 10, 2, 2, 20),
       {},
       {1},
       1},
      {"keeps a line with exactly 9 fields",
       std::string(kHeader) + "4 0 -1 10 2 -1 -1 2 20\n",
       {},
       {4},
       0},
      {"skips a non-number",
       std::string(kHeader) + "2 0 -1 1x0 2 -1 -1 2 20 -1 1 -1 -1 -1 1 -1 -1 -1\n" +
           Line(1, 0, 10, 2, 2, 20),
       {},
       {1},
       1},
      {"skips a non-number in an unused field",
       std::string(kHeader) + "2 0 -1 10 2 abc -1 2 20 -1 1 -1 -1 -1 1 -1 -1 -1\n",
       {},
       {},
       1},
      {"accepts decimal fields", std::string(kHeader) + "2 0 -1 10 2 3.75 -1 2 20\n", {}, {2}, 0},
      {"skips runtime < 0",
       std::string(kHeader) + Line(1, 0, -1, 2, 2, 20) + Line(2, 0, 10, 2, 2, 20),
       {},
       {2},
       1},
      {"keeps runtime 0", std::string(kHeader) + Line(1, 0, 0, 2, 2, 20), {}, {1}, 0},
      {"skips processors <= 0 (fields 5 and 8 both -1)",
       std::string(kHeader) + Line(1, 0, 10, -1, -1, 20) + Line(2, 0, 10, 0, 0, 20) +
           Line(3, 0, 10, 1, -1, 20),
       {},
       {3},
       2},
      {"skips processors > P",
       std::string(kHeader) + Line(1, 0, 10, 9, 9, 20) + Line(2, 0, 10, 8, 8, 20),
       {},
       {2},
       1},
      {"field 8 decides even when field 5 is too large",
       std::string(kHeader) + Line(1, 0, 10, 9, 4, 20),
       {},
       {1},
       0},
      {"skips submit < 0",
       std::string(kHeader) + Line(1, -5, 10, 2, 2, 20) + Line(2, 0, 10, 2, 2, 20),
       {},
       {2},
       1},
      {"stable sort by submit",
       std::string(kHeader) + Line(1, 30, 10, 2, 2, 20) + Line(2, 10, 10, 2, 2, 20) +
           Line(3, 30, 10, 2, 2, 20) + Line(4, 10, 10, 2, 2, 20) + Line(5, 20, 10, 2, 2, 20),
       {},
       {2, 4, 5, 1, 3},
       0},
      {"max_jobs keeps the first N that pass",
       std::string(kHeader) + Line(1, 0, -1, 2, 2, 20) + Line(2, 1, 10, 2, 2, 20) +
           Line(3, 2, 10, 99, 99, 20) + Line(4, 3, 10, 2, 2, 20) + Line(5, 4, 10, 2, 2, 20),
       {.max_jobs = 2},
       {2, 4},
       2},
      {"max_jobs applies after sorting",
       std::string(kHeader) + Line(1, 50, 10, 2, 2, 20) + Line(2, 40, 10, 2, 2, 20) +
           Line(3, 10, 10, 2, 2, 20),
       {.max_jobs = 2},
       {3, 2},
       0},
      {"max_jobs 0 keeps nothing",
       std::string(kHeader) + Line(1, 0, 10, 2, 2, 20),
       {.max_jobs = 0},
       {},
       0},
      {"options.procs replaces the header for the size rule",
       std::string(kHeader) + Line(1, 0, 10, 4, 4, 20) + Line(2, 0, 10, 2, 2, 20),
       {.procs = 3},
       {2},
       1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Workload> workload = ParseSwf(c.text, c.options);
    ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
    EXPECT_EQ(Ids(*workload), c.want_ids);
    EXPECT_EQ(workload->skipped, c.want_skipped);
  }
}

// Plain integers are read on a fast path; everything else goes through the general number
// rule, and both must agree on what a token is worth and on what is malformed.
TEST(SwfReaderTest, NumberTokens) {
  struct Case {
    std::string_view runtime;  // field 4
    int64_t want;              // -2: the line is skipped as malformed
  };
  const Case cases[] = {
      {"10", 10},
      {"007", 7},
      {"-0", 0},
      {"10.9", 10},
      {"1e3", 1000},
      {"123456789012345678", 123456789012345678},    // 18 digits: the fast path's largest
      {"1234567890123456789", 1234567890123456789},  // 19: the general rule
      {"99999999999999999999", INT64_MAX},           // saturated
      {"+5", -2},
      {"-", -2},
      {"5-", -2},
      {"1x", -2},
      {"0x10", -2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.runtime);
    const std::string text = std::string(kHeader) + "1 0 -1 " + std::string(c.runtime) +
                             " 2 -1 -1 2 20 -1 1 7 -1 -1 1 -1 -1 -1\n";
    Result<Workload> workload = ParseSwf(text, {});
    ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
    if (c.want == -2) {
      EXPECT_TRUE(workload->jobs.empty());
      EXPECT_EQ(workload->skipped, 1);
      continue;
    }
    ASSERT_EQ(workload->jobs.size(), 1u);
    EXPECT_EQ(workload->jobs[0].runtime, c.want);
    EXPECT_EQ(workload->jobs[0].spec.user, "u7");
  }
}

TEST(SwfReaderTest, FieldsBecomeTheJobSpec) {
  struct Case {
    std::string_view name;
    std::string line;
    int32_t want_tasks;
    Duration want_runtime;
    Duration want_run_limit;
    std::string want_user;
  };
  const std::vector<Case> cases = {
      {"field 8 when > 0", Line(7, 100, 30, 2, 4, 60, 12), 4, 30, 60, "u12"},
      {"field 5 when field 8 <= 0", Line(7, 100, 30, 2, -1, 60, 12), 2, 30, 60, "u12"},
      {"field 9 when > 0", Line(7, 100, 30, 2, 2, 45), 2, 30, 45, ""},
      {"runtime when field 9 is 0", Line(7, 100, 30, 2, 2, 0), 2, 30, 30, ""},
      {"runtime when field 9 is -1", Line(7, 100, 30, 2, 2, -1), 2, 30, 30, ""},
      {"user 0", Line(7, 100, 30, 2, 2, 45, 0), 2, 30, 45, "u0"},
      {"no user field", "7 100 -1 30 2 -1 -1 2 45\n", 2, 30, 45, ""},
      {"decimals are truncated", "7 100.9 -1 30.5 2 -1 -1 2.0 45.7 -1 1 3\n", 2, 30, 45, "u3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Workload> workload = ParseSwf("; MaxProcs: 8\n;\n" + c.line, {});
    ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
    ASSERT_EQ(workload->jobs.size(), 1u);
    const WorkloadJob& job = workload->jobs[0];
    EXPECT_EQ(job.spec.id, 7);
    EXPECT_EQ(job.spec.submit_time, 100);
    EXPECT_EQ(job.spec.min_tasks, c.want_tasks);
    EXPECT_EQ(job.spec.max_tasks, c.want_tasks);
    EXPECT_EQ(job.runtime, c.want_runtime);
    EXPECT_EQ(job.spec.run_limit, c.want_run_limit);
    EXPECT_EQ(job.spec.user, c.want_user);
    EXPECT_EQ(job.spec.queue, "");
    EXPECT_FALSE(job.cancel_at.has_value());
    EXPECT_EQ(job.line, 3);
  }
}

TEST(SwfReaderTest, MachineSize) {
  struct Case {
    std::string_view name;
    std::string header;
    int32_t procs_option;
    int32_t want_procs;  // 0: an error is expected
  };
  const std::vector<Case> cases = {
      {"MaxProcs", "; MaxProcs: 16\n; MaxNodes: 8\n", 0, 16},
      {"MaxNodes when MaxProcs is 0", "; MaxProcs: 0\n; MaxNodes: 8\n", 0, 8},
      {"MaxNodes when MaxProcs is -1", "; MaxProcs: -1\n; MaxNodes: 8\n", 0, 8},
      {"MaxNodes alone", "; MaxNodes: 8\n", 0, 8},
      {"leading integer of MaxNodes", "; MaxNodes: 128 (4 per node)\n", 0, 128},
      {"leading integer of MaxProcs", ";MaxProcs:   64x\n", 0, 64},
      {"--procs wins over the header", "; MaxProcs: 16\n", 4, 4},
      {"--procs without a header", "", 4, 4},
      {"no machine size is an error", "; Version: 2\n", 0, 0},
      {"zero sizes are an error", "; MaxProcs: 0\n; MaxNodes: 0\n", 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Workload> workload =
        ParseSwf(c.header + Line(1, 0, 10, 1, 1, 20), {.procs = c.procs_option});
    if (c.want_procs == 0) {
      ASSERT_FALSE(workload.has_value());
      EXPECT_EQ(workload.error().code(), StatusCode::kInvalidArgument);
      continue;
    }
    ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
    EXPECT_EQ(workload->procs, c.want_procs);
  }
}

TEST(SwfReaderTest, ReadsUnixStartTime) {
  Result<Workload> workload =
      ParseSwf("; UnixStartTime: 843480031\n; MaxNodes: 100\n" + Line(1, 0, 10, 1, 1, 20), {});
  ASSERT_TRUE(workload.has_value());
  EXPECT_EQ(workload->unix_start_time, 843480031);
  EXPECT_EQ(ParseSwf(Line(1, 0, 10, 1, 1, 20), {.procs = 2})->unix_start_time, 0);
}

TEST(SwfReaderTest, HandlesCrLfAndNoFinalNewline) {
  Result<Workload> workload =
      ParseSwf("; MaxProcs: 8\r\n1 0 -1 10 2 -1 -1 2 20\r\n2 5 -1 10 2 -1 -1 2 20", {});
  ASSERT_TRUE(workload.has_value());
  EXPECT_EQ(Ids(*workload), (std::vector<JobId>{1, 2}));
  EXPECT_EQ(workload->skipped, 0);
}

TEST(SwfReaderTest, WriteSwfRoundTrip) {
  Workload original = GenerateLublin({.jobs = 300, .procs = 64, .load = 0.8, .seed = 7});
  original.unix_start_time = 1000;
  original.jobs[3].spec.user = "alice";
  original.jobs[4].spec.run_limit.reset();
  Result<Workload> parsed = ParseSwf(WriteSwf(original), {});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->procs, 64);
  EXPECT_EQ(parsed->skipped, 0);
  EXPECT_EQ(parsed->unix_start_time, 1000);
  ASSERT_EQ(parsed->jobs.size(), original.jobs.size());
  for (size_t i = 0; i < original.jobs.size(); ++i) {
    SCOPED_TRACE("job " + std::to_string(original.jobs[i].spec.id));
    const WorkloadJob& want = original.jobs[i];
    const WorkloadJob& got = parsed->jobs[i];
    EXPECT_EQ(got.spec.id, want.spec.id);
    EXPECT_EQ(got.spec.submit_time, want.spec.submit_time);
    EXPECT_EQ(got.spec.min_tasks, want.spec.min_tasks);
    EXPECT_EQ(got.spec.max_tasks, want.spec.max_tasks);
    EXPECT_EQ(got.runtime, want.runtime);
    EXPECT_EQ(got.spec.run_limit, want.spec.run_limit.value_or(want.runtime));
    if (i != 3) {
      EXPECT_EQ(got.spec.user, want.spec.user);
    }
  }
  // "alice" is numbered after the largest u<N> and stays distinct from every other user.
  EXPECT_NE(parsed->jobs[3].spec.user, "");
  for (size_t i = 0; i < original.jobs.size(); ++i) {
    if (i != 3) {
      EXPECT_NE(parsed->jobs[i].spec.user, parsed->jobs[3].spec.user);
    }
  }
}

std::string TempPath(std::string_view name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(SwfReaderTest, ReadErrors) {
  Result<Workload> missing = ReadSwf(TempPath("no-such-trace.swf"), {});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);

  const std::string corrupt = TempPath("corrupt.swf.gz");
  WriteFile(corrupt, std::string_view("\x1f\x8b\x08\x00garbage-that-is-not-deflate", 31));
  Result<Workload> bad = ReadSwf(corrupt, {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message().rfind(corrupt + ": ", 0), 0u) << bad.error().message();

  const std::string headerless = TempPath("headerless.swf");
  WriteFile(headerless, Line(1, 0, 10, 1, 1, 20));
  Result<Workload> no_size = ReadSwf(headerless, {});
  ASSERT_FALSE(no_size.has_value());
  EXPECT_EQ(no_size.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(no_size.error().message().rfind(headerless + ": ", 0), 0u);
  EXPECT_TRUE(ReadSwf(headerless, {.procs = 1}).has_value());
}

// Reads `path` with at most 1 GiB of address space; 0 when it ends in a clear
// InvalidArgument error (death-test child).
[[noreturn]] void ReadExpectingErrorWithin1GiB(const std::string& path) {
  const rlimit limit{.rlim_cur = rlim_t{1} << 30, .rlim_max = rlim_t{1} << 30};
  setrlimit(RLIMIT_AS, &limit);
  Result<Workload> read = ReadSwf(path, {});
  std::_Exit(!read.has_value() && read.error().code() == StatusCode::kInvalidArgument ? 0 : 1);
}

// The gzip trailer's size field sizes the inflated text, but only up to deflate's largest
// ratio: a damaged one claiming 4 GiB for a 100-byte file is an error, not a 4 GiB buffer.
TEST(SwfReaderTest, ADamagedGzipSizeFieldIsNotTrusted) {
  const std::string text = std::string(kHeader) + Line(1, 0, 10, 1, 1, 20);
  std::string gz("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);  // gzip header
  const auto len = static_cast<uint16_t>(text.size());
  gz += '\x01';  // one final stored block: LEN, NLEN, the bytes
  gz += {static_cast<char>(len & 0xff), static_cast<char>(len >> 8), static_cast<char>(~len & 0xff),
         static_cast<char>((~len >> 8) & 0xff)};
  gz += text;
  gz += std::string(4, '\0');    // CRC-32 (wrong too)
  gz += std::string(4, '\xff');  // ISIZE: 4 GiB - 1
  const std::string path = TempPath("claims-4-gib.swf.gz");
  WriteFile(path, gz);
  EXPECT_EXIT(ReadExpectingErrorWithin1GiB(path), ::testing::ExitedWithCode(0), "");
}

// One gzip member holding `text`, compressed by zlib.
std::string GzipMember(std::string_view text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, text.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// Jobs 1..n, one line each, after the header.
std::string ManyJobs(int64_t n) {
  std::string text(kHeader);
  for (int64_t id = 1; id <= n; ++id) text += Line(id, id, 10, 1, 1, 20);
  return text;
}

// Concatenated members are one gzip file; the trailer states only the last member's size,
// so a large first member behind a small last one must grow the buffer.
TEST(SwfReaderTest, ConcatenatedGzipMembersAreReadWhole) {
  const std::string first = ManyJobs(4000);  // ~160 KB, more than the smallest buffer
  const std::string second = Line(4001, 4001, 10, 1, 1, 20);
  const std::string path = TempPath("two-members.swf.gz");
  WriteFile(path, GzipMember(first) + GzipMember(second));
  Result<Workload> read = ReadSwf(path, {});
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  ASSERT_EQ(read->jobs.size(), 4001u);
  for (size_t i = 0; i < read->jobs.size(); ++i) {
    ASSERT_EQ(read->jobs[i].spec.id, static_cast<JobId>(i + 1));
  }
}

// A cut file and garbage after a valid member are errors naming the file, never a
// shorter workload.
TEST(SwfReaderTest, TruncatedOrTrailingGarbageGzipIsAnError) {
  const std::string member = GzipMember(ManyJobs(2000));
  const std::string truncated = TempPath("truncated.swf.gz");
  WriteFile(truncated, std::string_view(member).substr(0, member.size() / 2));
  Result<Workload> cut = ReadSwf(truncated, {});
  ASSERT_FALSE(cut.has_value());
  EXPECT_EQ(cut.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cut.error().message(), truncated + ": gzip: truncated stream");

  const std::string trailing = TempPath("trailing-garbage.swf.gz");
  WriteFile(trailing, member + "not gzip at all");
  Result<Workload> garbage = ReadSwf(trailing, {});
  ASSERT_FALSE(garbage.has_value());
  EXPECT_EQ(garbage.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(garbage.error().message().rfind(trailing + ": gzip: ", 0), 0u)
      << garbage.error().message();
}

// The real traces in /work/shared/traces (see its README for the counts).
std::string TracePath(std::string_view file) {
  const char* source = std::getenv("SLUICE_SOURCE_DIR");
  if (source == nullptr) return "";
  const std::filesystem::path dir = std::filesystem::path(source) / ".." / "shared" / "traces";
  if (!std::filesystem::is_directory(dir)) return "";
  return (dir / file).string();
}

TEST(SwfReaderTest, RealTraces) {
  struct Case {
    std::string_view file;
    size_t want_jobs;
    int64_t want_skipped;
    int32_t want_procs;
  };
  const std::vector<Case> cases = {
      {"KTH-SP2-1996-2.1-cln.swf.gz", 28475, 1, 100},
      {"SDSC-SP2-1998-4.2-cln.swf.gz", 59715 - 5671, 5671, 128},
      {"HPC2N-2002-2.2-cln.swf.gz", 202871, 0, 240},
      {"lublin_256.swf", 10000, 0, 256},
  };
  if (TracePath("").empty()) GTEST_SKIP() << "no ../shared/traces next to SLUICE_SOURCE_DIR";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const auto start = std::chrono::steady_clock::now();
    Result<Workload> workload = ReadSwf(TracePath(c.file), {});
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
    std::printf("%s: %zu jobs, %lld skipped, %.3f s\n", std::string(c.file).c_str(),
                workload->jobs.size(), static_cast<long long>(workload->skipped), took.count());
    EXPECT_EQ(workload->jobs.size(), c.want_jobs);
    EXPECT_EQ(workload->skipped, c.want_skipped);
    EXPECT_EQ(workload->procs, c.want_procs);
    for (size_t i = 1; i < workload->jobs.size(); ++i) {
      ASSERT_LE(workload->jobs[i - 1].spec.submit_time, workload->jobs[i].spec.submit_time);
    }
  }
}

TEST(SwfReaderTest, KthSkipsOnlyJob27313) {
  if (TracePath("").empty()) GTEST_SKIP() << "no ../shared/traces next to SLUICE_SOURCE_DIR";
  Result<Workload> workload = ReadSwf(TracePath("KTH-SP2-1996-2.1-cln.swf.gz"), {});
  ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
  EXPECT_EQ(workload->unix_start_time, 843480031);
  const std::vector<JobId> ids = Ids(*workload);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 27313), 0);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 27312), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 27314), 1);
}

TEST(SwfReaderTest, SdscMaxJobsCountsAfterFiltering) {
  if (TracePath("").empty()) GTEST_SKIP() << "no ../shared/traces next to SLUICE_SOURCE_DIR";
  Result<Workload> workload =
      ReadSwf(TracePath("SDSC-SP2-1998-4.2-cln.swf.gz"), {.max_jobs = 10000});
  ASSERT_TRUE(workload.has_value()) << workload.error().ToString();
  EXPECT_EQ(workload->jobs.size(), 10000u);
  for (const WorkloadJob& job : workload->jobs) ASSERT_GE(job.runtime, 0);
}

TEST(SwfReaderTest, PlainAndGzipGiveTheSameJobs) {
  if (TracePath("").empty()) GTEST_SKIP() << "no ../shared/traces next to SLUICE_SOURCE_DIR";
  Result<std::string> text = ReadMaybeGzipFile(TracePath("KTH-SP2-1996-2.1-cln.swf.gz"));
  ASSERT_TRUE(text.has_value()) << text.error().ToString();
  EXPECT_EQ(text->rfind("; Version: 2.2", 0), 0u);
  const std::string plain = TempPath("kth.swf");
  WriteFile(plain, *text);
  Result<Workload> from_plain = ReadSwf(plain, {});
  Result<Workload> from_gzip = ReadSwf(TracePath("KTH-SP2-1996-2.1-cln.swf.gz"), {});
  ASSERT_TRUE(from_plain.has_value() && from_gzip.has_value());
  EXPECT_EQ(Ids(*from_plain), Ids(*from_gzip));
  EXPECT_EQ(from_plain->skipped, from_gzip->skipped);
}

}  // namespace
}  // namespace sluice::sim
