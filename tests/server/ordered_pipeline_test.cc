// OrderedPipeline (server/ordered_pipeline.h): chunks are applied exactly once each, in the
// order read, however the preparers finish; no more than max_in_flight are read and not yet
// applied; a reader's error comes back after what it read is applied; the caller alone
// prepares when there are no workers.
#include "server/ordered_pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace sluice::server {
namespace {

using Pipeline = OrderedPipeline<std::vector<int>, std::vector<int>>;

std::vector<int> Chunk(int first, int size) {
  std::vector<int> chunk;
  for (int i = 0; i < size; ++i) chunk.push_back(first + i);
  return chunk;
}

// Preparers that finish out of order: each sleeps a pseudo-random while, seeded by its chunk.
std::vector<int> SlowlyDoubled(std::vector<int>&& chunk) {
  std::mt19937 rng(static_cast<uint32_t>(chunk.empty() ? 0 : chunk.front()));
  std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
  for (int& v : chunk) v *= 2;
  return std::move(chunk);
}

TEST(OrderedPipelineTest, AppliesEveryChunkOnceInTheOrderRead) {
  for (int workers : {0, 1, 3}) {
    std::vector<int> applied;
    const Pipeline::Stages stages{.read =
                                      [](const Pipeline::Emit& emit) {
                                        for (int c = 0; c < 60; ++c) emit(Chunk(c * 10, 10));
                                        return Status::Ok();
                                      },
                                  .prepare = SlowlyDoubled,
                                  .apply =
                                      [&](std::vector<int>&& chunk) {
                                        applied.insert(applied.end(), chunk.begin(), chunk.end());
                                      }};
    ASSERT_TRUE(Pipeline::Run(stages, workers, 4).ok());
    ASSERT_EQ(applied.size(), 600u) << workers << " workers";
    for (int i = 0; i < 600; ++i) ASSERT_EQ(applied[i], 2 * i) << workers << " workers";
  }
}

TEST(OrderedPipelineTest, ReadsNoMoreThanMaxInFlightAheadOfTheApplied) {
  std::atomic<int> read = 0;
  int applied = 0;
  int most_ahead = 0;
  const Pipeline::Stages stages{
      .read =
          [&](const Pipeline::Emit& emit) {
            for (int c = 0; c < 40; ++c) {
              emit(Chunk(c, 1));
              ++read;
            }
            return Status::Ok();
          },
      .prepare = SlowlyDoubled,
      .apply =
          [&](std::vector<int>&& /*chunk*/) {
            most_ahead = std::max(most_ahead, read.load() - applied);
            std::this_thread::sleep_for(std::chrono::microseconds(300));  // a slow applier
            ++applied;
          }};
  ASSERT_TRUE(Pipeline::Run(stages, 2, 3).ok());
  EXPECT_EQ(applied, 40);
  EXPECT_LE(most_ahead, 3);
  EXPECT_GE(most_ahead, 1);
}

TEST(OrderedPipelineTest, AReadersErrorComesBackAfterWhatItReadIsApplied) {
  std::vector<int> applied;
  const Pipeline::Stages stages{.read =
                                    [](const Pipeline::Emit& emit) {
                                      emit(Chunk(0, 3));
                                      emit(Chunk(3, 3));
                                      return Status(StatusCode::kInternal, "disk I/O error");
                                    },
                                .prepare = SlowlyDoubled,
                                .apply =
                                    [&](std::vector<int>&& chunk) {
                                      applied.insert(applied.end(), chunk.begin(), chunk.end());
                                    }};
  const Status status = Pipeline::Run(stages, 1, 8);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(applied, (std::vector<int>{0, 2, 4, 6, 8, 10}));
}

TEST(OrderedPipelineTest, NothingReadNothingApplied) {
  int applied = 0;
  const Pipeline::Stages stages{.read = [](const Pipeline::Emit&) { return Status::Ok(); },
                                .prepare = SlowlyDoubled,
                                .apply = [&](std::vector<int>&&) { ++applied; }};
  EXPECT_TRUE(Pipeline::Run(stages, 2, 4).ok());
  EXPECT_EQ(applied, 0);
}

}  // namespace
}  // namespace sluice::server
