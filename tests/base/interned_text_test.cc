// InternedText (interned_text.h): one pool entry per distinct text, shared by every holder.
#include "base/interned_text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sluice {
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

// A record's member reads and writes as the std::string it replaced (the core's JobSpec).
TEST(InternedTextTest, ReadsAndWritesAsAString) {
  InternedText user = "text-carol";
  EXPECT_TRUE(user == "text-carol");
  EXPECT_TRUE(user == std::string("text-carol"));
  EXPECT_TRUE(user == std::string_view("text-carol"));
  EXPECT_TRUE("text-carol" == user);
  EXPECT_EQ("user " + user, "user text-carol");
  EXPECT_EQ(user + "!", "text-carol!");
  EXPECT_EQ(user.size(), 10u);
  const std::string& as_string = user;
  const std::string_view as_view = user;
  EXPECT_EQ(as_string, as_view);
  user = std::string("text-dave");
  EXPECT_EQ(user.str(), "text-dave");
}

// Ordered by text, not by where the pool put the entry: sorted listings stay alphabetical.
TEST(InternedTextTest, OrdersByText) {
  std::vector<InternedText> names;
  for (const char* name : {"order-m", "order-z", "order-a", "order-q"}) names.emplace_back(name);
  std::sort(names.begin(), names.end());
  std::vector<std::string> texts(names.begin(), names.end());
  EXPECT_EQ(texts, (std::vector<std::string>{"order-a", "order-m", "order-q", "order-z"}));
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
}  // namespace sluice
