// InternedText (interned_text.h): one pool entry per distinct text, shared by every holder.
#include "server/interned_text.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace sluice::server {
namespace {

TEST(InternedTextTest, EqualTextsShareOneEntry) {
  const InternedText a("interned-alice");
  const InternedText b(std::string("interned-") + "alice");
  EXPECT_EQ(&a.str(), &b.str());  // the same entry, not two copies
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(a == "interned-alice");
  EXPECT_FALSE(a == InternedText("interned-bob"));
}

TEST(InternedTextTest, ManyHoldersOfAFewTextsAddOnlyThoseTexts) {
  const size_t before = InternedTextCount();
  std::vector<InternedText> users;
  for (int i = 0; i < 10'000; ++i) users.emplace_back("pool-user-" + std::to_string(i % 3));
  EXPECT_EQ(InternedTextCount(), before + 3);
  EXPECT_EQ(users[0].str(), "pool-user-0");
  EXPECT_EQ(users[9'999].str(), "pool-user-0");
}

TEST(InternedTextTest, EmptyTextIsTheDefaultAndAddsNothing) {
  const size_t before = InternedTextCount();
  const InternedText empty("");
  EXPECT_TRUE(empty.empty());
  EXPECT_TRUE(empty == InternedText());
  EXPECT_EQ(InternedTextCount(), before);
}

TEST(InternedTextTest, ThreadsInterningTheSameTextGetOneEntry) {
  std::vector<const std::string*> seen(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&seen, t] {
      for (int i = 0; i < 1'000; ++i) seen[t] = &InternedText("threaded-queue").str();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string* p : seen) EXPECT_EQ(p, seen[0]);
}

}  // namespace
}  // namespace sluice::server
