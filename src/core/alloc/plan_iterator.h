// PlanIterator: the candidate plans of one primary request, lazily, most consolidated first
// (R-AL-2, from the Composition Algorithm of seeds/001).
//
// A plan partitions N tasks over k distinct hosts into buckets, largest first:
//  - no span: k = 1 .. N, balanced — (N mod k) buckets of ceil(N/k), the rest floor(N/k);
//  - span[hosts=1]: the single plan [N];
//  - span[ptile=K]: the single plan [K, K, ..., N mod K] (exactly K per host, the last host
//    takes the remainder; LSF semantics: 7 tasks, ptile=3 -> 3,3,1).
// Without a span, one last plan follows the balanced ones: the *packed* plan, which fills the
// hosts with the most room first ([4,2,1,1] for 8 tasks on hosts with 4, 2, 1 and 1 free).
// NOTE: this extends R-AL-2, whose balanced plans alone would leave such a job pending
// forever — and call it unschedulable on an idle cluster — although its slots exist.
// Plans that cannot succeed are skipped without scanning hosts: a plan needing more hosts
// than are eligible, or whose i-th largest bucket exceeds the i-th largest number of tasks
// any eligible host can take (`fits`, sorted descending). For one primary request on
// interchangeable resources that test is exact — a plan that passes it is satisfied by
// first-fit over the buckets in descending order — so a 1,000-task job on one-slot hosts
// costs O(hosts), not O(tasks x hosts): k starts at ceil(N / max fit).
// Interface in LevelDB Iterator style: Valid() / value() / Next().
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sluice::core {

enum class SpanKind : uint8_t;

struct PlanShape {
  int32_t tasks = 1;
  bool one_host = false;  // span[hosts=1]
  int32_t ptile = 0;      // span[ptile=K]; 0: none
};

class PlanIterator {
 public:
  // `fits`: for every eligible host, the most tasks it can take now, sorted descending.
  // The span must outlive the iterator.
  PlanIterator(PlanShape shape, std::span<const int32_t> fits);

  bool Valid() const { return valid_; }
  // Bucket sizes, descending. REQUIRES: Valid().
  const std::vector<int32_t>& value() const { return buckets_; }
  void Next();

 private:
  void SeekFeasible();    // from k_ upward, the first feasible balanced plan
  bool Feasible() const;  // buckets_ against fits_
  void MakeBalanced(int32_t k);
  bool MakePacked();  // false when the fits cannot hold the tasks

  PlanShape shape_;
  std::span<const int32_t> fits_;
  std::vector<int32_t> buckets_;
  int32_t k_ = 0;
  bool valid_ = false;
  bool packed_ = false;  // the packed plan is (or was) the current one
};

}  // namespace sluice::core
