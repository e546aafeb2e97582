#include "server/peek_broker.h"

#include <limits>

#include "server/job_identity.h"
#include "server/text_parsers.h"

#include <algorithm>

namespace sluice::server {

using nlohmann::json;

Result<PeekQuery> ParsePeekQuery(const std::multimap<std::string, std::string>& params) {
  PeekQuery query;
  for (const auto& [key, value] : params) {
    if (key == "lines") {
      Result<int64_t> lines = QueryInteger(key, value, 1, wire::kMaxPeekLines);
      if (!lines) return lines.error();
      query.lines = *lines;
    } else if (key == "offset") {
      Result<int64_t> offset = QueryInteger(key, value, 0, std::numeric_limits<int64_t>::max());
      if (!offset) return offset.error();
      query.offset = *offset;
    } else if (key != "index") {  // `index` picks an array element: read by the route
      return InvalidArgument(key + ": unknown query parameter");
    }
  }
  return query;
}

Result<json> PeekBroker::Peek(MutexLock& lock, ServerContext& ctx, JobBook& book,
                              const Caller& caller, JobId id, int64_t lines,
                              std::optional<int64_t> offset) {
  JobInfo* job = book.Find(id);
  if (job == nullptr) return NotFound("no job " + std::to_string(id));
  const std::string owner = job->user;
  SLUICE_RETURN_IF_ERROR(RefuseUnlessOwner(caller, owner, id, "peek only at their own jobs"));
  if (job->state() != JobState::kRunning || job->launch().launch_host.empty()) {
    return FailedPrecondition("job " + std::to_string(id) + " is " + job->StateText() +
                              "; only a RUNNING job's output can be peeked at");
  }
  const std::string host = job->launch().launch_host;
  const int64_t order_id = next_id_++;
  orders_[host].push_back(
      wire::PeekOrder{.id = order_id,
                      .job = id,
                      .lines = std::clamp<int64_t>(lines, 1, wire::kMaxPeekLines),
                      .offset = offset});
  waiting_.insert(order_id);
  ctx.wakeups().WakeAll();  // the agent's outstanding long poll answers with the order
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  const bool answered = delivered_.wait_until(
      lock, deadline, [&] { return results_.contains(order_id) || ctx.stopping(); });
  waiting_.erase(order_id);
  auto queued = orders_.find(host);
  if (queued != orders_.end()) {  // never taken: withdraw it
    std::erase_if(queued->second, [&](const wire::PeekOrder& o) { return o.id == order_id; });
    if (queued->second.empty()) orders_.erase(queued);
  }
  auto result = results_.find(order_id);
  if (!answered || result == results_.end()) {
    return Status(StatusCode::kUnavailable, "the agent on " + host + " did not answer within " +
                                                std::to_string(timeout_.count()) + " ms");
  }
  wire::PeekResult r = std::move(result->second);
  results_.erase(result);
  if (!r.error.empty()) return FailedPrecondition(r.error);
  return json{
      {"job", id}, {"host", host}, {"text", r.text}, {"offset", r.offset}, {"size", r.size}};
}

std::vector<wire::PeekOrder> PeekBroker::TakeOrders(const std::string& host) {
  auto it = orders_.find(host);
  if (it == orders_.end()) return {};
  std::vector<wire::PeekOrder> orders = std::move(it->second);
  orders_.erase(it);
  return orders;
}

void PeekBroker::Deliver(const std::vector<wire::PeekResult>& results) {
  bool any = false;
  for (const wire::PeekResult& r : results) {
    if (!waiting_.contains(r.id)) continue;  // late: its request gave up
    results_[r.id] = r;
    any = true;
  }
  if (any) delivered_.notify_all();
}

}  // namespace sluice::server
