// Signal names (issue 47): what `sluice cancel --signal`, `scancel -s` and `bkill -s` accept,
// and the names that travel to the agents.
#include "wire/signal_name.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace sluice::wire {
namespace {

TEST(SignalNameTest, NamesWithOrWithoutSigInAnyCaseAreCanonical) {
  for (const char* text : {"USR1", "SIGUSR1", "usr1", "SigUsr1"}) {
    Result<std::string> name = CanonicalSignal(text);
    ASSERT_TRUE(name) << text << ": " << name.error().message();
    EXPECT_EQ(*name, "USR1");
  }
  EXPECT_EQ(CanonicalSignal("term").value(), "TERM");
}

TEST(SignalNameTest, ANumberIsThisMachinesSignal) {
  EXPECT_EQ(CanonicalSignal(std::to_string(SIGUSR2)).value(), "USR2");
  EXPECT_EQ(CanonicalSignal(std::to_string(SIGKILL)).value(), "KILL");
}

TEST(SignalNameTest, OthersAreRefusedNamingTheAccepted) {
  for (const char* text : {"", "SIG", "SEGV", "CHLD", "USR3", "0", "-1", "99", "10x", "USR1 "}) {
    Result<std::string> name = CanonicalSignal(text);
    ASSERT_FALSE(name) << text;
    EXPECT_EQ(name.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(name.error().message().find("USR1, USR2"), std::string::npos)
        << name.error().message();
  }
}

TEST(SignalNameTest, TheApiTakesNamesOnly) {
  EXPECT_EQ(CanonicalSignalName("sigusr1").value(), "USR1");
  Result<std::string> number = CanonicalSignalName(std::to_string(SIGUSR1));
  ASSERT_FALSE(number);
  EXPECT_NE(number.error().message().find("not a number"), std::string::npos);
}

TEST(SignalNameTest, EveryCanonicalNameHasThisMachinesNumber) {
  EXPECT_EQ(SignalNumber("USR1"), SIGUSR1);
  EXPECT_EQ(SignalNumber("STOP"), SIGSTOP);
  EXPECT_EQ(SignalNumber("CONT"), SIGCONT);
  EXPECT_FALSE(SignalNumber("SIGUSR1"));  // canonical names only: CanonicalSignal first
  EXPECT_FALSE(SignalNumber("usr1"));
  EXPECT_FALSE(SignalNumber("SEGV"));
}

}  // namespace
}  // namespace sluice::wire
