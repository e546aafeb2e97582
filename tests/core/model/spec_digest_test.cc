// SpecDigest: equal specs digest alike, every identifying field changes the digest, and the
// values are pinned (the digest is computed word by word; it must not depend on the build).
#include <gtest/gtest.h>

#include <vector>

#include "core/model/job.h"

namespace sluice::core {
namespace {

JobSpec Sample() {
  JobSpec spec;
  spec.id = 42;
  spec.name = "sweep-step-17";
  spec.user = "u7";
  spec.queue = "normal";
  spec.resreq = "select[mem>4000] rusage[mem=100]";
  spec.min_tasks = 4;
  spec.max_tasks = 8;
  spec.run_limit = 3600;
  spec.submit_time = 1000;
  return spec;
}

TEST(SpecDigestTest, EqualSpecsDigestAlike) {
  EXPECT_EQ(SpecDigest(Sample()), SpecDigest(Sample()));
}

TEST(SpecDigestTest, EveryFieldChangesTheDigest) {
  const uint64_t base = SpecDigest(Sample());
  std::vector<void (*)(JobSpec&)> changes = {
      [](JobSpec& s) { s.id = 43; },
      [](JobSpec& s) { s.name = "sweep-step-18"; },
      [](JobSpec& s) { s.user = "u8"; },
      [](JobSpec& s) { s.project = "p"; },
      [](JobSpec& s) { s.queue = "normaL"; },
      [](JobSpec& s) { s.command = "run"; },
      [](JobSpec& s) { s.resreq = "select[mem>4000] rusage[mem=101]"; },
      [](JobSpec& s) { s.min_tasks = 5; },
      [](JobSpec& s) { s.max_tasks = 9; },
      [](JobSpec& s) { s.run_limit.reset(); },
      [](JobSpec& s) { s.priority = 1; },
      [](JobSpec& s) { s.submit_time = 1001; },
      [](JobSpec& s) { s.begin_time = 5; },
      [](JobSpec& s) { s.depend = "done(1)"; },
      [](JobSpec& s) { s.exclusive = true; },
      [](JobSpec& s) { s.hold = true; },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    JobSpec spec = Sample();
    changes[i](spec);
    EXPECT_NE(SpecDigest(spec), base) << "change " << i;
  }
}

TEST(SpecDigestTest, StringsAreLengthPrefixed) {
  JobSpec a = Sample();
  JobSpec b = Sample();
  a.name = "ab";
  a.user = "c";
  b.name = "a";
  b.user = "bc";
  EXPECT_NE(SpecDigest(a), SpecDigest(b));
  // Bytes past a string's end inside its last word must not matter (no reads beyond it).
  a.name = "12345678x";
  b.name = "12345678y";
  EXPECT_NE(SpecDigest(a), SpecDigest(b));
}

TEST(SpecDigestTest, ValuesArePinned) {
  EXPECT_EQ(SpecDigest(JobSpec{}), 0xed1726bf0a19122bULL);
  EXPECT_EQ(SpecDigest(Sample()), 0xbd13741cd8077714ULL);
}

}  // namespace
}  // namespace sluice::core
