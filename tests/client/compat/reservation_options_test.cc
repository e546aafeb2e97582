// A job in an advance reservation (R-RSV-2) as each dialect asks for it: `sluice submit -U`,
// `bsub -U`, `sbatch --reservation`, and the #SLUICE, #BSUB and #SBATCH directives; the
// submission body carries it as `reservation`.
#include <gtest/gtest.h>

#include "client/compat/bsub_request.h"
#include "client/compat/sbatch_request.h"
#include "client/directives.h"
#include "client/submit_request.h"

namespace sluice::client::compat {
namespace {

constexpr int64_t kNow = 1796425873;

TEST(ReservationOptionsTest, BsubDashUSetsTheReservation) {
  const std::vector<std::string> args = {"-U", "course", "-n", "2", "sleep", "1"};
  Result<BsubCommandLine> line = ParseBsubArgs(args, kNow);
  ASSERT_TRUE(line.has_value()) << line.error().message();
  Result<SubmitFlags> flags = ToSubmitFlags(line->request);
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(flags->reservation, "course");
  EXPECT_EQ(line->operands, (std::vector<std::string>{"sleep", "1"}));
  const std::vector<std::string> empty = {"-U", "", "sleep", "1"};
  EXPECT_EQ(ParseBsubArgs(empty, kNow).error().code(), StatusCode::kInvalidArgument);
}

TEST(ReservationOptionsTest, SbatchReservationSetsItInEachSpelling) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--reservation=course", "x.sh"},
        std::vector<std::string>{"--reservation", "course", "x.sh"},
        std::vector<std::string>{"--reserv=course", "x.sh"}}) {  // a unique prefix, as getopt
    SCOPED_TRACE(args[0]);
    Result<SbatchCommandLine> line = ParseSbatchArgs(args, kNow);
    ASSERT_TRUE(line.has_value()) << line.error().message();
    Result<SubmitFlags> flags = ToSubmitFlags(line->request, "alice");
    ASSERT_TRUE(flags.has_value());
    EXPECT_EQ(flags->reservation, "course");
  }
  const std::vector<std::string> empty = {"--reservation=", "x.sh"};
  EXPECT_EQ(ParseSbatchArgs(empty, kNow).error().code(), StatusCode::kInvalidArgument);
}

TEST(ReservationOptionsTest, DirectivesOfEachDialectAndTheCommandLineWins) {
  for (std::string_view script :
       {"#!/bin/sh\n#SBATCH --reservation=course\ntrue\n", "#!/bin/sh\n#BSUB -U course\ntrue\n",
        "#!/bin/sh\n#SLUICE -U course\ntrue\n",
        "#!/bin/sh\n#SLUICE --reservation=course\ntrue\n"}) {
    SCOPED_TRACE(script);
    Result<Directives> d = ParseDirectives(script, "job.sh", kNow);
    ASSERT_TRUE(d.has_value()) << d.error().message();
    EXPECT_EQ(d->flags.reservation, "course");
    EXPECT_EQ(MergeFlags(SubmitFlags{.reservation = "other"}, d->flags).reservation, "other");
    EXPECT_EQ(MergeFlags(SubmitFlags{}, d->flags).reservation, "course");
  }
  // sbatch: the command line's --reservation wins over the script's.
  SbatchRequest directives;
  const std::vector<std::string> words = {"--reservation=course"};
  ASSERT_TRUE(ApplySbatchDirective(words, kNow, directives).ok());
  Result<SbatchCommandLine> line =
      ParseSbatchArgs(std::vector<std::string>{"--reservation=rush", "x.sh"}, kNow);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(MergeSbatch(line->request, directives).reservation, "rush");
  EXPECT_EQ(MergeSbatch(SbatchRequest{}, directives).reservation, "course");
}

TEST(ReservationOptionsTest, TheSubmissionBodyCarriesIt) {
  Result<nlohmann::json> body = BuildSubmitBody(
      SubmitFlags{.command = {"true"}, .reservation = "course"}, "/home/alice", kNow);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_EQ(body->value("reservation", ""), "course");
  body = BuildSubmitBody(SubmitFlags{.command = {"true"}}, "/home/alice", kNow);
  ASSERT_TRUE(body.has_value());
  EXPECT_FALSE(body->contains("reservation"));
}

}  // namespace
}  // namespace sluice::client::compat
