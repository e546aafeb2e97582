// Token digests: SHA-256 as sha256sum prints it, hex parsing, constant-time equality.
#include "auth/digest.h"

#include <gtest/gtest.h>

namespace sluice::auth {
namespace {

TEST(DigestTest, Sha256MatchesTheStandardVector) {
  EXPECT_EQ(ToHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(DigestTest, ParsesHexInEitherCaseAndRefusesOtherText) {
  Sha256Digest digest{};
  ASSERT_TRUE(
      ParseHexDigest("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", digest));
  EXPECT_TRUE(ConstantTimeEqual(digest, Sha256("abc")));
  EXPECT_FALSE(ParseHexDigest("ba7816bf", digest));  // too short
  EXPECT_FALSE(ParseHexDigest(std::string(64, 'g'), digest));
}

TEST(DigestTest, DifferentDigestsAreNotEqual) {
  EXPECT_FALSE(ConstantTimeEqual(Sha256("token-a"), Sha256("token-b")));
  EXPECT_TRUE(ConstantTimeEqual(Sha256("token-a"), Sha256("token-a")));
}

}  // namespace
}  // namespace sluice::auth
