// Controller::SubmitLocked: the common end of Submit and SubmitBatch (controller.h), with the
// submission's Idempotency-Key (idempotency.h) and the pending quotas (pending_quota.h);
// issue 19.
#include <spdlog/spdlog.h>

#include "server/controller.h"
#include "server/fixed_text_pool.h"
#include "server/job_environment.h"
#include "server/pending_quota.h"

namespace sluice::server {

using nlohmann::json;

namespace {

constexpr int64_t kAwaitInProgressMs = 30'000;

json Replayed(const std::vector<JobId>& ids, bool batch) {
  if (batch) return json{{"ids", ids}};
  return json{{"id", ids.at(0)}};
}

std::vector<JobId> IdsOf(const json& answer) {
  if (answer.contains("ids")) return answer["ids"].get<std::vector<JobId>>();
  return {answer["id"].get<JobId>()};
}

}  // namespace

// Steps: 1. a key already used by this user: its result (waiting while it is in progress),
// or a refusal for a different body (kKeyReused) or one still in progress (kKeyInFlight);
// 2. the pending quotas (kOverQuota) and the jobs that can never run (kNeverRuns); 3. the submission, its key (if any) tagged on the specs and remembered once the
// submission was acknowledged.
Answer Controller::SubmitLocked(MutexLock& lock, const Caller& runs_as,
                               const std::string& key, const std::string& digest,
                               std::vector<json> specs,
                               std::vector<std::shared_ptr<const std::string>> fixed, bool batch) {
  if (!key.empty()) {
    IdempotencyKeys::Lookup found = idempotency_.Find(runs_as.user, key, digest, ctx_.Now());
    if (found.found == IdempotencyKeys::Found::kInProgress) {
      idempotency_.AwaitSettled(lock, runs_as.user, key, kAwaitInProgressMs);
      found = idempotency_.Find(runs_as.user, key, digest, ctx_.Now());
    }
    switch (found.found) {
      case IdempotencyKeys::Found::kDone:
        ctx_.log().info("submission of {} with Idempotency-Key {} repeated: answered its job {}",
                       runs_as.user, key, found.ids.at(0));
        return Replayed(found.ids, batch);
      case IdempotencyKeys::Found::kMismatch:
        return Refusal{.kind = RefusalKind::kKeyReused,
                       .message = "Idempotency-Key '" + key + "' was used at " +
                                  std::to_string(found.when) +
                                  " for a different submission; a new submission needs a new key"};
      case IdempotencyKeys::Found::kInProgress:
        return Refusal{.kind = RefusalKind::kKeyInFlight,
                       .message = "a submission with Idempotency-Key '" + key +
                                  "' is still being stored; retry"};
      case IdempotencyKeys::Found::kNone:
        break;
    }
  }
  ApplyPolicy(runs_as, specs, fixed);
  if (std::optional<Refusal> over =
          CheckPendingQuota(settings_.auth().quotas, ctx_.state(), runs_as.user, specs, batch)) {
    ctx_.log().info("submission of {} refused: {}", runs_as.user, over->message);
    return *over;
  }
  if (std::optional<Refusal> refused = refusals_.Check(ctx_, runs_as, specs, batch)) {
    return *refused;
  }
  if (key.empty()) {
    return requests_.Submit(lock, runs_as, std::move(specs), std::move(fixed), batch);
  }
  idempotency_.Begin(runs_as.user, key, digest, ctx_.Now(), specs);
  Result<json> answer = requests_.Submit(lock, runs_as, std::move(specs), std::move(fixed), batch);
  if (answer) {
    idempotency_.Finish(runs_as.user, key, IdsOf(*answer));
  } else {
    idempotency_.Abandon(runs_as.user, key);
  }
  return answer;
}

void Controller::ApplyPolicy(const Caller& runs_as, std::vector<json>& specs,
                             std::vector<std::shared_ptr<const std::string>>& fixed) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string output = specs[i].value("output", "");
    const std::vector<std::string> removed = ApplyJobPolicy(settings_.auth().jobs, specs[i]);
    if (!removed.empty()) {
      ctx_.log().debug("submission of {}: {} variable(s) not passed to the job (jobs.env_deny)",
                       runs_as.user, removed.size());
    }
    // The listing's text shows the output the job writes (a default one included).
    if (specs[i].value("output", "") != output) fixed[i] = SharedFixedText(specs[i]);
  }
}

}  // namespace sluice::server
