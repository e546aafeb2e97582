#include "base/mutex.h"

#include <cstdio>
#include <cstdlib>

namespace sluice {

namespace {

// The mutexes this thread holds, in acquisition order. Eight is more than any path nests
// (the deepest today: controller, store fault, store queue).
constexpr int kMaxHeld = 8;
struct Held {
  const Mutex* mutexes[kMaxHeld];
  int count = 0;
};
thread_local Held held;

[[noreturn]] void OrderViolated(const Mutex& taking, const Mutex& holding) {
  std::fprintf(stderr,
               "lock order violated: acquiring %s while holding %s (a mutex may be taken only "
               "while holding mutexes of lower rank; docs/design/architecture.md, Lock order)\n",
               ToString(taking.rank()), ToString(holding.rank()));
  std::abort();
}

void CheckOrder(const Mutex& taking) {
  for (int i = 0; i < held.count; ++i) {
    if (held.mutexes[i]->rank() >= taking.rank()) OrderViolated(taking, *held.mutexes[i]);
  }
  if (held.count == kMaxHeld) {
    std::fprintf(stderr, "lock order: more than %d mutexes held by one thread\n", kMaxHeld);
    std::abort();
  }
}

void Push(const Mutex* mu) { held.mutexes[held.count++] = mu; }

void Pop(const Mutex* mu) {
  for (int i = held.count - 1; i >= 0; --i) {
    if (held.mutexes[i] != mu) continue;
    for (int j = i; j + 1 < held.count; ++j) held.mutexes[j] = held.mutexes[j + 1];
    --held.count;
    return;
  }
}

}  // namespace

const char* ToString(LockRank rank) {
  switch (rank) {
    case LockRank::kStatsSampler:
      return "stats sampler";
    case LockRank::kHistoryKeeper:
      return "history keeper";
    case LockRank::kEstimator:
      return "estimator";
    case LockRank::kController:
      return "controller";
    case LockRank::kStoreFault:
      return "store fault";
    case LockRank::kStoreQueue:
      return "store queue";
    case LockRank::kStoreSpecs:
      return "store specs";
    case LockRank::kSpecReader:
      return "spec reader";
    case LockRank::kHistoryReader:
      return "history reader";
    case LockRank::kAuth:
      return "auth";
    case LockRank::kIdentityCache:
      return "identity cache";
    case LockRank::kStepStreams:
      return "step streams";
    case LockRank::kEventQueue:
      return "event queue";
    case LockRank::kConnectionRegistry:
      return "connection registry";
    case LockRank::kConnections:
      return "connections";
    case LockRank::kWorkerQueue:
      return "worker queue";
    case LockRank::kAgentsHeard:
      return "agents heard";
    case LockRank::kPipeline:
      return "pipeline";
    case LockRank::kDrmaaTemplate:
      return "drmaa template";
    case LockRank::kDrmaaSession:
      return "drmaa session";
  }
  return "?";
}

void Mutex::lock() {
  CheckOrder(*this);
  mu_.lock();
  Push(this);
}

void Mutex::unlock() {
  Pop(this);
  mu_.unlock();
}

bool Mutex::try_lock() {
  // No order check: a try cannot deadlock.
  if (held.count == kMaxHeld) return false;
  if (!mu_.try_lock()) return false;
  Push(this);
  return true;
}

bool Mutex::HeldByThisThread() const {
  for (int i = 0; i < held.count; ++i) {
    if (held.mutexes[i] == this) return true;
  }
  return false;
}

}  // namespace sluice
