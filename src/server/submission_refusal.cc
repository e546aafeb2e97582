#include "server/submission_refusal.h"

#include "core/admission/submission_check.h"
#include "server/job_spec.h"
#include "wire/reasons_json.h"

namespace sluice::server {

using nlohmann::json;

std::optional<Refusal> SubmissionRefusals::Check(ServerContext& ctx, const Caller& caller,
                                               const std::vector<json>& specs, bool batch) {
  core::SubmissionCheck check(ctx.memoizing_state(), allocator_);
  for (size_t i = 0; i < specs.size(); ++i) {
    core::JobSpec spec = ToCoreSpec(specs[i], 0);
    spec.user = caller.user;
    std::optional<core::NeverRunnable> never = check.Check(spec);
    if (!never) continue;
    const std::string queue =
        spec.queue.empty() ? ctx.state().topology().queues()[ctx.state().topology().default_queue()].spec.name : spec.queue;
    refused_by_queue_[queue] += 1;
    json details = json::array();
    for (const core::ReasonDetail& detail : never->reasons.details) {
      if (detail.code == never->reasons.main)
        details.push_back(json::parse(wire::ReasonDetailToJson(detail).dump()));
    }
    json cause = {{"reason", "UNSCHEDULABLE"},
                  {"message", never->message},
                  {"queue", queue},
                  {"details", details}};
    const std::string where = batch ? "jobs[" + std::to_string(i) + "]: " : "";
    if (batch) cause["index"] = i;
    ctx.log().info("submission of {} refused: {}{}", caller.user, where, never->message);
    return Refusal{
        .kind = RefusalKind::kNeverRuns, .message = where + never->message, .cause = cause};
  }
  return std::nullopt;
}

int64_t SubmissionRefusals::Count(const std::string& queue) const {
  auto it = refused_by_queue_.find(queue);
  return it == refused_by_queue_.end() ? 0 : it->second;
}

}  // namespace sluice::server
