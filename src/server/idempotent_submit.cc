// Controller::SubmitLocked: the common end of Submit and SubmitBatch (controller.h), with the
// submission's Idempotency-Key (idempotency.h) and the pending quotas (pending_quota.h);
// issue 19.
#include <spdlog/spdlog.h>

#include "server/controller.h"
#include "server/pending_quota.h"

namespace sluice::server {

using nlohmann::json;

namespace {

constexpr int64_t kAwaitInProgressMs = 30'000;

Reply Replayed(const std::vector<JobId>& ids, bool batch) {
  if (batch) return Reply{201, json{{"ids", ids}}};
  return Reply{201, json{{"id", ids.at(0)}}};
}

std::vector<JobId> IdsOf(const json& answer) {
  if (answer.contains("ids")) return answer["ids"].get<std::vector<JobId>>();
  return {answer["id"].get<JobId>()};
}

}  // namespace

// Steps: 1. a key already used by this user: its result (waiting while it is in progress),
// or 422 for a different body; 2. the pending quotas (429) and the jobs that can never run
// (422); 3. the submission, its key (if any) tagged on the specs and remembered once the
// submission was acknowledged.
Reply Controller::SubmitLocked(std::unique_lock<std::mutex>& lock, const Caller& runs_as,
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
        ctx_.log->info("submission of {} with Idempotency-Key {} repeated: answered its job {}",
                       runs_as.user, key, found.ids.at(0));
        return Replayed(found.ids, batch);
      case IdempotencyKeys::Found::kMismatch:
        return Reply::Error(422, "Idempotency-Key '" + key + "' was used at " +
                                     std::to_string(found.when) +
                                     " for a different submission; a new submission needs a "
                                     "new key");
      case IdempotencyKeys::Found::kInProgress:
        return Reply::Error(
            409, "a submission with Idempotency-Key '" + key + "' is still being stored; retry");
      case IdempotencyKeys::Found::kNone:
        break;
    }
  }
  if (std::optional<Reply> over =
          CheckPendingQuota(settings_.auth().quotas, ctx_.state, runs_as.user, specs, batch)) {
    ctx_.log->info("submission of {} refused: {}", runs_as.user, (*over).body["error"].dump());
    return *over;
  }
  if (std::optional<Reply> refused = refusals_.Check(ctx_, runs_as, specs, batch)) {
    return *refused;
  }
  if (key.empty()) {
    return ReplyOf(requests_.Submit(lock, runs_as, std::move(specs), std::move(fixed), batch), 201);
  }
  idempotency_.Begin(runs_as.user, key, digest, ctx_.Now(), specs);
  Result<json> answer = requests_.Submit(lock, runs_as, std::move(specs), std::move(fixed), batch);
  if (answer) {
    idempotency_.Finish(runs_as.user, key, IdsOf(*answer));
  } else {
    idempotency_.Abandon(runs_as.user, key);
  }
  return ReplyOf(std::move(answer), 201);
}

}  // namespace sluice::server
