// SharedFixedText (fixed_text_pool.h): one copy of a listing's fixed members per distinct
// text, the same text as wire::FixedJobText, dropped with its last holder.
#include "server/fixed_text_pool.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "wire/job_json.h"

namespace sluice::server {
namespace {

using nlohmann::json;

TEST(FixedTextPoolTest, EqualSpecsShareOneCopy) {
  const json spec = {{"name", "pool-a"}, {"command", "true"}, {"max_tasks", 2}};
  const size_t before = SharedFixedTextCount();
  std::shared_ptr<const std::string> a = SharedFixedText(spec);
  std::shared_ptr<const std::string> b = SharedFixedText(json::parse(spec.dump()));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(*a, *wire::FixedJobText(spec));  // the same text as made alone
  std::shared_ptr<const std::string> c = SharedFixedText({{"name", "pool-b"}});
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(SharedFixedTextCount(), before + 2);
  a.reset();
  EXPECT_EQ(SharedFixedTextCount(), before + 2);  // b still holds it
  b.reset();
  c.reset();
  EXPECT_EQ(SharedFixedTextCount(), before);
}

TEST(FixedTextPoolTest, CopiesTakenAndDroppedOnManyThreads) {
  const json spec = {{"name", "pool-threads"}};
  const std::string expected = *wire::FixedJobText(spec);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        std::shared_ptr<const std::string> copy = SharedFixedText(spec);
        ASSERT_EQ(*copy, expected);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(SharedFixedText(spec).use_count(), 1);  // no stale entry was kept
}

}  // namespace
}  // namespace sluice::server
