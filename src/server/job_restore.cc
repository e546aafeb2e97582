// JobBook's restart (job_book.h, "Restart"): the stored rows back into the records and the
// core. A row is prepared on any thread (its spec parsed once) and restored in id order under
// the controller's lock (issue 45: the controller's OrderedPipeline runs both at once).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/array_ids.h"
#include "server/fixed_text_pool.h"
#include "server/idempotency.h"
#include "server/job_arrays.h"
#include "server/job_book.h"
#include "server/job_spec.h"
#include "wire/gpu_indexes.h"

namespace sluice::server {

using nlohmann::json;

namespace {

// The allocation of a stored row, or an error when the cluster no longer has its hosts or
// resources.
// A stored grant's GPUs: its `gpus` indexes; or, for one stored before devices had indexes,
// as many of the host's free devices as its `gpu` count (it was bound to none, so any do).
Result<uint64_t> GpusOfGrant(const json& h, const core::HostGrant& grant,
                             const core::ClusterState& state) {
  const core::Host& host = state.topology().hosts()[grant.host];
  auto listed = h.find("gpus");
  if (listed == h.end()) {
    auto gpu = state.topology().FindHostResource("gpu");
    for (const core::ResourceAmount& r : grant.resources) {
      if (gpu && r.id == *gpu) {
        return core::LowestBits(host.GpusFree(), static_cast<int32_t>(r.amount));
      }
    }
    return uint64_t{0};
  }
  Result<uint64_t> mask = wire::GpuMaskOf(*listed);
  if (!mask) return mask.error().WithPrefix("host " + host.spec.name + ": gpus");
  return mask;
}

Result<core::Allocation> DecodeAllocation(const std::string& text,
                                          const core::ClusterState& state) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("bad allocation " + text);
  core::Allocation alloc;
  for (const json& h : j.value("hosts", json::array())) {
    auto host = state.topology().FindHost(h.value("host", ""));
    if (!host) return NotFound("no host " + h.value("host", ""));
    core::HostGrant grant{
        .host = *host, .slots = h.value("slots", 0), .whole_host = h.value("whole_host", false)};
    for (auto it = h["resources"].begin(); it != h["resources"].end(); ++it) {
      auto id = state.topology().FindHostResource(it.key());
      if (!id) return NotFound("no host resource " + it.key());
      grant.resources.push_back({*id, it.value().get<int64_t>()});
    }
    Result<uint64_t> gpus = GpusOfGrant(h, grant, state);
    if (!gpus) return gpus.error();
    grant.gpus = *gpus;
    if (auto mem = h.find("gpu_mem_mb"); mem != h.end()) {  // shared mode
      if (!mem->is_number_integer() || mem->get<int64_t>() <= 0 || grant.gpus == 0) {
        return InvalidArgument("host " + h.value("host", "") +
                               ": gpu_mem_mb must be a positive integer beside gpus");
      }
      grant.gpu_mem_mb = mem->get<int64_t>();
    }
    alloc.hosts.push_back(std::move(grant));
  }
  for (auto it = j["shared"].begin(); it != j["shared"].end(); ++it) {
    auto id = state.topology().FindSharedResource(it.key());
    if (!id) return NotFound("no shared resource " + it.key());
    alloc.shared.push_back({*id, it.value().get<int64_t>()});
  }
  return alloc;
}

// The hosts (by name) of a stored allocation, for an ended job's "where it ran".
std::vector<std::pair<std::string, int32_t>> HostsOf(const std::string& allocation) {
  std::vector<std::pair<std::string, int32_t>> hosts;
  json alloc = json::parse(allocation, nullptr, false);
  if (!alloc.is_object()) return hosts;
  for (const json& g : alloc.value("hosts", json::array())) {
    hosts.emplace_back(g.value("host", ""), g.value("slots", 0));
  }
  return hosts;
}

core::AdmissionRecord RecordOf(const JobRow& row, const core::JobSpec& spec) {
  return core::AdmissionRecord{
      .enqueue_time = row.enqueue_time,
      .spec_digest = core::SpecDigest(spec),
      .policy = core::ParsePolicyKind(row.policy.str()).value_or(core::PolicyKind::kFifo),
      .bypass_count = row.bypass_count,
      .first_blocked = row.first_blocked,
      .gate_since = row.gate_since,
      .epoch = row.epoch};
}

// The tag (IdempotencyKeys) of a spec that has one.
void NoteIdempotency(const json& spec, RestoringRow& out) {
  auto tag = spec.find("idempotency");
  if (tag == spec.end()) return;
  out.idempotency = *tag;
  auto user = spec.find("user");
  if (user != spec.end() && user->is_string()) out.user = user->get<std::string>();
}

// PrepareRestore's record of an unfinished or retained job from its parsed spec.
void PrepareRecord(store::StoredJob&& stored, json&& parsed, const JobBook::RestoreFrame& frame,
                   core::AdmissionPhase phase, RestoringRow& out) {
  auto info = std::make_shared<JobInfo>();
  info->row = JobRow::From(std::move(stored));  // one copy of each row, not two
  const JobRow& row = info->row;
  info->message = row.message;
  info->SetState(out.state);
  info->SetPhase(phase);
  info->AdoptSpec(parsed);
  // Read from the store when needed again (SpecText): the text was parsed once, here.
  if (frame.drops_specs && !IsArrayParent(*info)) info->row.spec.clear();
  info->fixed_text = SharedFixedText(parsed);
  info->queue = InternedText(parsed.value("queue", ""));
  if (info->queue.empty()) info->queue = frame.default_queue;
  if (out.ended) {
    if (!row.allocation.empty()) info->mutable_launch().hosts = HostsOf(row.allocation);
  } else if (IsArrayParent(*info)) {
    out.array_spec = std::move(parsed);
  } else {
    core::JobSpec spec = ToCoreSpec(parsed, row.id);
    spec.hold = out.state == JobState::kHeld;
    out.record = RecordOf(row, spec);
    out.spec = std::move(spec);
  }
  out.info = std::move(info);
}

}  // namespace

// --- Restart ------------------------------------------------------------------------------------

JobBook::RestoreFrame JobBook::BeginRestore(std::function<void(const RestoringRow&)> noted) {
  restore_noted_ = std::move(noted);
  restoring_elements_.clear();
  element_states_.clear();
  holding_.clear();
  RestoreFrame frame{.now = ctx_.Now(),
                     .keep_ended_seconds = ctx_.options().keep_ended_seconds,
                     .drops_specs = DropsStoredSpecs(ctx_)};
  const auto& topology = ctx_.state().topology();
  if (!topology.queues().empty()) {
    frame.default_queue = InternedText(topology.queues()[topology.default_queue()].spec.name);
  }
  return frame;
}

// Steps: 1. what restoring it needs without the spec (an ended job past the retention is only
// noted for dependencies); 2. the spec parsed once: its idempotency tag, the record, the
// core's spec. Reads nothing shared but `frame` and the text pools (thread-safe).
RestoringRow JobBook::PrepareRestore(store::StoredJob&& stored, const RestoreFrame& frame) {
  RestoringRow out;
  out.id = stored.id;
  out.submit_time = stored.submit_time;
  out.end_time = stored.end_time;
  if (IsArrayElement(stored.id)) out.element_state = StoredElementState(stored);
  const std::optional<JobState> state = ParseJobState(stored.state);
  const std::optional<core::AdmissionPhase> phase = ParseAdmissionPhase(stored.phase);
  out.known = state && phase;
  if (!out.known) {
    out.error = "stored state " + stored.state + " phase " + stored.phase + " unknown; skipped";
  } else {
    out.state = *state;
    out.ended = *phase == core::AdmissionPhase::kEnded;
    // start_seq, not start_time: a requeue clears the start time, not the fact it started.
    out.started = stored.start_seq != 0 || stored.start_time != 0 || !stored.allocation.empty();
  }
  const bool expired = out.ended && frame.keep_ended_seconds >= 0 &&
                       stored.end_time + frame.keep_ended_seconds <= frame.now;
  // A cheap text test first: most rows carry no tag.
  const bool tagged = stored.submit_time + IdempotencyKeys::kTtlSeconds > frame.now &&
                      stored.spec.find("\"idempotency\"") != std::string::npos;
  if (!tagged && (!out.known || expired)) return out;
  try {
    json parsed = json::parse(stored.spec, nullptr, /*allow_exceptions=*/false);
    if (tagged && parsed.is_object()) NoteIdempotency(parsed, out);
    if (!out.known || expired) return out;
    if (!parsed.is_object()) {
      out.error = "stored spec is not JSON; skipped";
      return out;
    }
    PrepareRecord(std::move(stored), std::move(parsed), frame, *phase, out);
  } catch (const std::exception& e) {  // a member of an unexpected type (json::value)
    out.error = std::string("stored spec unreadable (") + e.what() + "); skipped";
    out.info.reset();
    out.spec.reset();
  }
  return out;
}

void JobBook::RestorePrepared(RestoringRow&& row) {
  next_id_ = std::max(next_id_, ArrayIdOf(row.id) + 1);
  if (IsArrayElement(row.id)) {  // read before every other row; restored by EndRestore
    element_states_[ArrayIdOf(row.id)].emplace_back(ArrayIndexOf(row.id), row.element_state);
    restoring_elements_.push_back(std::move(row));
    return;
  }
  RestoreRow(std::move(row));
}

void JobBook::RestoreRow(RestoringRow&& row) {
  if (restore_noted_) restore_noted_(row);
  if (row.known && row.ended) {
    // Not restored into the core; dependencies that name it keep its verdict. An element of
    // an array the core holds again reads its state there.
    if (!IsArrayElement(row.id) || ctx_.state().FindArray(ArrayIdOf(row.id)) == nullptr) {
      (void)ctx_.ApplyLocked(core::EndedJobNoted{row.id, CoreEndedState(row.state), row.started},
                             "job " + std::to_string(row.id));
    }
  }
  if (!row.error.empty()) ctx_.log().error("job {}: {}", FormatJobId(row.id), row.error);
  if (!row.info) return;  // not restored, or only in the store
  if (row.ended) {
    ended_by_time_.insert({row.end_time, row.id});
    Put(std::move(row.info));
    return;
  }
  if (!row.array_spec.is_null()) {
    const JobId id = row.id;
    Status restored = RestoreArrayRow(*Put(std::move(row.info)), row.array_spec);
    if (!restored.ok()) {
      ctx_.log().error("{}; skipped", restored.message());
      Drop(id);
    }
    return;
  }
  std::shared_ptr<JobInfo> info = std::move(row.info);
  const std::string what = "job " + std::to_string(row.id) + ": cannot restore";
  if (ctx_.ApplyLocked(core::JobRestored{std::move(*row.spec), info->row.seq, row.record}, what)
          .ok()) {
    // Its queue as the core resolved it, before Put counts it (counted once, not twice).
    const core::ClusterState& cs = ctx_.state();
    info->in_core = true;
    info->restored_waiting = IsWaiting(row.state);
    info->queue = InternedText(cs.topology().queues()[cs.FindJob(row.id)->queue].spec.name);
  }
  JobInfo* job = Put(std::move(info));
  if (job->in_core && job->HoldsAllocation()) holding_.push_back(job);
}

JobBook::Restored JobBook::EndRestore(store::WriteBatch& batch) {
  for (RestoringRow& row : restoring_elements_) RestoreRow(std::move(row));
  restoring_elements_ = {};
  element_states_.clear();
  std::vector<JobInfo*> holding = std::exchange(holding_, {});
  restore_noted_ = nullptr;
  std::sort(holding.begin(), holding.end(),
            [](const JobInfo* a, const JobInfo* b) { return a->row.start_seq < b->row.start_seq; });
  Restored restored{.holding = holding.size()};
  for (JobInfo* job : holding) {
    if (RestoreAllocation(*job, batch)) restored.launch_hosts.push_back(job->launch().launch_host);
    Recount(*job);  // a requeued one changed state after Put counted it
  }
  return restored;
}

bool JobBook::RestoreAllocation(JobInfo& job, store::WriteBatch& batch) {
  const core::ClusterState& cs = ctx_.state();
  Result<core::Allocation> alloc = DecodeAllocation(job.row.allocation, cs);
  Status restored = alloc ? Status::Ok() : alloc.error();
  if (alloc) {
    const JobId preempted_for = job.BeingPreempted() ? job.row.preempted_for : kNoJob;
    restored = ctx_.ApplyLocked(
        core::AllocationRestored{job.row.id, *alloc, job.row.start_time, preempted_for}, "");
  }
  if (!restored.ok()) {
    // The configuration changed under it: it cannot hold those slots; it waits again.
    ctx_.log().error("job {}: stored allocation no longer fits ({}); requeued",
                     FormatJobId(job.row.id), restored.message());
    const bool cancelled = job.row.cancel_requested;
    job.SetPhase(core::AdmissionPhase::kPending);
    job.SetState(cancelled ? JobState::kCancelled : JobState::kPending);
    job.row.allocation.clear();
    job.ClearPreemption();
    if (cancelled) {
      (void)ctx_.ApplyLocked(core::JobCancelled{job.row.id}, "");
      job.SetPhase(core::AdmissionPhase::kEnded);
      job.row.end_time = ctx_.Now();
      ended_by_time_.insert({job.row.end_time, job.row.id});
    }
    batch.jobs.push_back(job.Stored());
    return false;
  }
  // The victim keeps being stopped for the same job, with the same kill time.
  job.preempt_committed = job.BeingPreempted();
  std::vector<std::pair<std::string, int32_t>> hosts;
  for (const core::HostGrant& g : alloc->hosts) {
    hosts.emplace_back(cs.topology().hosts()[g.host].spec.name, g.slots);
  }
  SetHosts(job, std::move(hosts));
  job.from_earlier_epoch = job.phase() == core::AdmissionPhase::kAdmitting;
  job.launch_ready = true;
  return true;
}

}  // namespace sluice::server
