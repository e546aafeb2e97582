#include "server/submission_refusal.h"

#include "core/admission/submission_check.h"
#include "base/array_ids.h"
#include "core/model/dependency.h"
#include "server/job_spec.h"
#include "wire/reasons_json.h"

namespace sluice::server {

using nlohmann::json;

namespace {

// A job whose dependency names a job the controller does not know (never submitted, or ended
// and forgotten) would never start: refused before it takes an id (issue 47.7), as LSF's bsub
// refuses `done(9999)` with "No matching job found".
std::optional<Refusal> UnknownDependency(const core::ClusterState& state, const json& spec,
                                         const std::string& where, const json& index) {
  const std::string text = spec.value("depend", "");
  if (text.empty()) return std::nullopt;
  Result<core::Dependency> dependency = core::Dependency::Parse(text);
  if (!dependency) return std::nullopt;  // the submission reports the syntax error
  for (JobId named : dependency->jobs()) {
    if (state.Knows(named)) continue;
    const std::string message =
        where + "depend: no job " + FormatJobId(named) + " (the job would never start)";
    json cause = {{"reason", "DEPENDENCY"}, {"message", message}, {"job", FormatJobId(named)}};
    if (!index.is_null()) cause["index"] = index;
    return Refusal{.kind = RefusalKind::kNeverRuns, .message = message, .cause = cause};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Refusal> SubmissionRefusals::Check(ServerContext& ctx, const Caller& caller,
                                               const std::vector<json>& specs, bool batch) {
  core::SubmissionCheck check(ctx.memoizing_state(), allocator_);
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string where = batch ? "jobs[" + std::to_string(i) + "]: " : "";
    if (auto unknown = UnknownDependency(ctx.state(), specs[i], where, batch ? json(i) : json())) {
      ctx.log().info("submission of {} refused: {}", caller.user, unknown->message);
      return unknown;
    }
    core::JobSpec spec = ToCoreSpec(specs[i], 0);
    spec.user = caller.user;
    std::optional<core::NeverRunnable> never = check.Check(spec);
    if (!never) continue;
    const std::string queue =
        spec.queue.empty()
            ? ctx.state().topology().queues()[ctx.state().topology().default_queue()].spec.name
            : spec.queue.str();
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
