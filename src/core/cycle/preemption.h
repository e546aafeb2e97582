// Preemption (R-CAP-3 reclaim, R-CAP-4 priority preemption): choosing victims, keeping what
// they free for the job they were chosen for, and the reclaim deadlines of capacity queues.
//
// One scheduling cycle runs two phases here (steps 3 and 6 of Scheduler::RunCycle):
//  - KeepReservations, before the queues: a job with a preemption in progress starts first
//    if what was freed fits it; while its victims still run it pends with PREEMPTING and the
//    victims' hosts are withheld from everyone else, so the freed slots wait for it.
//  - Preempt, after the queues: a capacity queue below its guarantee whose blocked job has
//    waited past the queue's reclaim deadline, and the blocked head of a `preemptive`
//    queue, get victims.
// Victims are chosen by asking the allocator whether the job fits on the cycle's capacity
// with the candidates' allocations credited back: candidates are added in order
// (reclaim: from the queue most over its guarantee, levelling the ratios, never taking a
// queue below its guarantee; priority: lowest queue priority first; within a queue most
// recently started first) until the job fits on the capacity "as if they were gone"; then
// every victim whose removal still lets it fit is dropped, so the set is minimal (dropping
// any one leaves the job unable to start). A job with a preemption in progress gets no new
// victims, and a victim is never chosen twice: no thrash.
#pragma once

#include <optional>
#include <vector>

#include "core/admission/cycle_context.h"
#include "core/alloc/allocator.h"

namespace sluice::core {

// Phase 1 (see above). Runs before any queue.
void KeepReservations(CycleContext& ctx);

// Phase 2 (see above). Runs after every queue.
void Preempt(CycleContext& ctx);

// The minimal victim set among `candidates` (in preference order) that lets `job` fit on
// `base` (the cycle's capacity), or nullopt when even all of them would not suffice.
// Exposed for tests.
std::optional<std::vector<const Job*>> ChooseVictims(const Job& job,
                                                     const std::vector<const Job*>& candidates,
                                                     const Capacity& base, const CycleContext& ctx);

}  // namespace sluice::core
