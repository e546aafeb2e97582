// Test builders for clusters, jobs and states (header-only, for core and driver tests).
//
//   ClusterState state = ClusterBuilder().Hosts(4, 2).Policy(PolicyKind::kEasyBackfill).State();
//   Submit(state, JobBuilder(7).Tasks(4).Limit(600).Submit(10));
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "core/model/cluster_state.h"
#include "core/model/config.h"

namespace sluice::testing {

class ClusterBuilder {
 public:
  // `count` hosts of `slots` slots named h<k>, k counting all hosts added so far from 1.
  ClusterBuilder& Hosts(int32_t count, int32_t slots) {
    for (int32_t i = 0; i < count; ++i) {
      Host("h" + std::to_string(config_.hosts.size() + 1), slots);
    }
    return *this;
  }
  ClusterBuilder& Host(std::string name, int32_t slots,
                       core::HostState state = core::HostState::kOk) {
    core::HostSpec host;
    host.name = std::move(name);
    host.slots = slots;
    host.state = state;
    config_.hosts.push_back(std::move(host));
    return *this;
  }
  // Adds a fully described host.
  ClusterBuilder& Host(core::HostSpec host) {
    config_.hosts.push_back(std::move(host));
    return *this;
  }
  ClusterBuilder& Shared(std::string name, int64_t total) {
    config_.shared_resources[std::move(name)] = total;
    return *this;
  }
  ClusterBuilder& Queue(std::string name, core::PolicyKind policy, int32_t priority = 0) {
    core::QueueSpec queue;
    queue.name = std::move(name);
    queue.policy = policy;
    queue.priority = priority;
    config_.queues.push_back(std::move(queue));
    return *this;
  }
  // Adds a queue described in full.
  ClusterBuilder& Queue(core::QueueSpec queue) {
    config_.queues.push_back(std::move(queue));
    return *this;
  }
  ClusterBuilder& Limit(core::LimitSpec limit) {
    config_.limits.push_back(std::move(limit));
    return *this;
  }
  // Sets the policy of every queue (adding a queue "normal" when there is none).
  ClusterBuilder& Policy(core::PolicyKind policy) {
    if (config_.queues.empty()) Queue("normal", policy);
    for (core::QueueSpec& queue : config_.queues) queue.policy = policy;
    return *this;
  }
  core::ClusterConfig Config() const {
    core::ClusterConfig config = config_;
    if (config.queues.empty()) config.queues.push_back(core::QueueSpec{.name = "normal"});
    return config;
  }
  core::ClusterState State() const {
    Result<core::ClusterState> state = core::ClusterState::Create(Config());
    SLUICE_CHECK(state.has_value());
    return std::move(state).value();
  }

 private:
  core::ClusterConfig config_;
};

class JobBuilder {
 public:
  explicit JobBuilder(JobId id) {
    spec_.id = id;
    spec_.user = "u1";
  }
  JobBuilder& Tasks(int32_t n) {
    spec_.min_tasks = spec_.max_tasks = n;
    return *this;
  }
  JobBuilder& TaskRange(int32_t min, int32_t max) {
    spec_.min_tasks = min;
    spec_.max_tasks = max;
    return *this;
  }
  JobBuilder& Limit(Duration limit) {
    spec_.run_limit = limit;
    return *this;
  }
  JobBuilder& Submit(Instant t) {
    spec_.submit_time = t;
    return *this;
  }
  JobBuilder& Queue(std::string queue) {
    spec_.queue = std::move(queue);
    return *this;
  }
  JobBuilder& Priority(int32_t priority) {
    spec_.priority = priority;
    return *this;
  }
  JobBuilder& Depend(std::string expression) {
    spec_.depend = std::move(expression);
    return *this;
  }
  JobBuilder& Hold() {
    spec_.hold = true;
    return *this;
  }
  JobBuilder& User(std::string user) {
    spec_.user = std::move(user);
    return *this;
  }
  JobBuilder& Project(std::string project) {
    spec_.project = std::move(project);
    return *this;
  }
  JobBuilder& ResReq(std::string resreq) {
    spec_.resreq = std::move(resreq);
    return *this;
  }
  JobBuilder& Exclusive() {
    spec_.exclusive = true;
    return *this;
  }
  JobBuilder& Reservation(std::string name) {
    spec_.reservation = std::move(name);
    return *this;
  }

  core::JobSpec Build() const { return spec_; }
  operator core::JobSpec() const { return spec_; }  // NOLINT: builder convenience

 private:
  core::JobSpec spec_;
};

inline void Submit(core::ClusterState& state, const core::JobSpec& spec) {
  Status status = core::Apply(core::JobSubmitted{spec}, spec.submit_time, state);
  ASSERT_TRUE(status.ok()) << status.ToString();
}

// Submits a job and starts it at `start` on the first free slots (test setup only).
inline void SubmitRunning(core::ClusterState& state, const core::JobSpec& spec, Instant start) {
  Submit(state, spec);
  core::Allocation allocation;
  int32_t wanted = spec.min_tasks;
  for (const core::Host& host : state.topology().hosts()) {
    if (wanted == 0) break;
    const int32_t take = std::min(wanted, host.AcceptsWork() ? host.FreeSlots() : 0);
    if (take > 0) allocation.hosts.push_back(core::HostGrant{host.index, take});
    wanted -= take;
  }
  ASSERT_EQ(wanted, 0) << "no room to start job " << spec.id;
  state.Start(spec.id, std::move(allocation), start);
  state.MarkClassified();
}

// The ids of the jobs a cycle started, in decision order.
inline std::vector<JobId> Started(const core::CycleResult& result) {
  std::vector<JobId> ids;
  for (const core::Decision& d : result.decisions) {
    if (const auto* start = std::get_if<core::StartJob>(&d)) ids.push_back(start->job);
  }
  return ids;
}

// The last UpdateAdmission decision of a job, or nullptr.
inline const core::UpdateAdmission* AdmissionUpdateOf(const core::CycleResult& result, JobId id) {
  const core::UpdateAdmission* last = nullptr;
  for (const core::Decision& d : result.decisions) {
    if (const auto* u = std::get_if<core::UpdateAdmission>(&d); u && u->job == id) last = u;
  }
  return last;
}

// One cycle at `now` with explanations, the state left as it was.
inline core::CycleResult ExplainedCycle(const core::ClusterState& state, Instant now) {
  return core::Scheduler().RunCycle(state, now, core::CycleOptions{.explain = true});
}

// Runs one cycle and commits it: the state after the cycle at `now`.
inline core::CycleResult CycleAndCommit(core::ClusterState& state, Instant now) {
  core::CycleResult result = core::Scheduler().RunCycle(state, now, {.explain = true});
  core::Commit(result, now, state);
  return result;
}

// The StartJob decision of a job, or nullptr.
inline const core::StartJob* StartOf(const core::CycleResult& result, JobId id) {
  for (const core::Decision& d : result.decisions) {
    if (const auto* start = std::get_if<core::StartJob>(&d); start && start->job == id) {
      return start;
    }
  }
  return nullptr;
}

// The reasons a cycle gave a pending job (explain mode), or nullopt.
inline std::optional<core::PendingReasons> ReasonsOf(const core::CycleResult& result, JobId id) {
  for (const core::Decision& d : result.decisions) {
    if (const auto* pend = std::get_if<core::PendJob>(&d); pend && pend->job == id) {
      return pend->reasons;
    }
  }
  return std::nullopt;
}

}  // namespace sluice::testing
