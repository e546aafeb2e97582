#include "wire/agent_batch.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

namespace sluice::wire {

using nlohmann::json;

json EncodeBatchHeartbeat(const BatchHeartbeatRequest& request) {
  json hosts = json::array();
  for (const auto& [name, heartbeat] : request.hosts) {
    json body = EncodeHeartbeat(heartbeat);
    body.erase("wait_ms");
    hosts.push_back({{"name", name}, {"heartbeat", std::move(body)}});
  }
  json out = {{"wait_ms", request.wait_ms}, {"hosts", std::move(hosts)}};
  if (!request.poll.empty()) {
    out["poll"] = request.poll;
    out["instance"] = request.instance;
  }
  if (request.compact) out["compact"] = true;
  return out;
}

namespace {

// The names seen so far point into the request's JSON, which outlives the decoding.
using SeenNames = std::unordered_set<std::string_view>;

Status DecodeHost(const json& entry, const std::string& where, SeenNames& seen,
                  BatchHeartbeatRequest& out) {
  if (!entry.is_object()) return InvalidArgument(where + ": expected an object");
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (it.key() != "name" && it.key() != "heartbeat") {
      return InvalidArgument(where + "." + it.key() + ": unknown field");
    }
  }
  auto name = entry.find("name");
  if (name == entry.end() || !name->is_string() || name->get_ref<const std::string&>().empty() ||
      name->get_ref<const std::string&>().size() > 255) {
    return InvalidArgument(where + ".name: expected a host name");
  }
  if (!seen.insert(name->get_ref<const std::string&>()).second) {
    return InvalidArgument(where + ".name: " + name->get<std::string>() + " is listed twice");
  }
  auto heartbeat = entry.find("heartbeat");
  if (heartbeat == entry.end()) return InvalidArgument(where + ".heartbeat: missing");
  Result<HeartbeatRequest> decoded = DecodeHeartbeat(*heartbeat);
  if (!decoded) return InvalidArgument(where + ".heartbeat." + decoded.error().message());
  out.hosts.emplace_back(name->get<std::string>(), std::move(*decoded));
  return Status::Ok();
}

Status DecodePoll(const json& body, SeenNames& seen, BatchHeartbeatRequest& out) {
  if (auto instance = body.find("instance"); instance != body.end()) {
    if (!instance->is_string() || instance->get_ref<const std::string&>().size() > 64) {
      return InvalidArgument("instance: expected a string of at most 64 characters");
    }
    out.instance = instance->get<std::string>();
  }
  auto poll = body.find("poll");
  if (poll == body.end()) return Status::Ok();
  if (!poll->is_array()) return InvalidArgument("poll: expected a list of host names");
  if (poll->size() + out.hosts.size() > kMaxBatchHosts) {
    return InvalidArgument("poll: more than " + std::to_string(kMaxBatchHosts) + " hosts");
  }
  out.poll.reserve(poll->size());
  for (size_t i = 0; i < poll->size(); ++i) {  // thousands per request: no string per entry
    const json& name = (*poll)[i];
    const auto where = [i] { return "poll[" + std::to_string(i) + "]"; };
    if (!name.is_string() || name.get_ref<const std::string&>().empty() ||
        name.get_ref<const std::string&>().size() > 255) {
      return InvalidArgument(where() + ": expected a host name");
    }
    const std::string& text = name.get_ref<const std::string&>();
    if (!seen.insert(text).second)
      return InvalidArgument(where() + ": " + text + " is listed twice");
    out.poll.push_back(text);
  }
  return Status::Ok();
}

}  // namespace

Result<BatchHeartbeatRequest> DecodeBatchHeartbeat(const json& body) {
  if (!body.is_object()) return InvalidArgument("body: expected an object");
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (it.key() != "wait_ms" && it.key() != "hosts" && it.key() != "poll" &&
        it.key() != "instance" && it.key() != "compact") {
      return InvalidArgument(it.key() + ": unknown field");
    }
  }
  BatchHeartbeatRequest request;
  if (auto wait = body.find("wait_ms"); wait != body.end()) {
    if (!wait->is_number_integer()) return InvalidArgument("wait_ms: expected an integer");
    request.wait_ms =
        wait->is_number_unsigned()
            ? static_cast<int64_t>(std::min<uint64_t>(wait->get<uint64_t>(), kMaxWaitMs))
            : std::clamp<int64_t>(wait->get<int64_t>(), 0, kMaxWaitMs);
  }
  if (auto compact = body.find("compact"); compact != body.end()) {
    if (!compact->is_boolean()) return InvalidArgument("compact: expected true or false");
    request.compact = compact->get<bool>();
  }
  auto hosts = body.find("hosts");
  if (hosts == body.end() || !hosts->is_array()) {
    return InvalidArgument("hosts: expected a list of host heartbeats");
  }
  if (hosts->size() > kMaxBatchHosts) {
    return InvalidArgument("hosts: " + std::to_string(hosts->size()) + " hosts, at most " +
                           std::to_string(kMaxBatchHosts));
  }
  SeenNames seen;
  seen.reserve(hosts->size() + (body.contains("poll") ? body["poll"].size() : 0));
  request.hosts.reserve(hosts->size());
  for (size_t i = 0; i < hosts->size(); ++i) {
    SLUICE_RETURN_IF_ERROR(
        DecodeHost((*hosts)[i], "hosts[" + std::to_string(i) + "]", seen, request));
  }
  SLUICE_RETURN_IF_ERROR(DecodePoll(body, seen, request));
  return request;
}

Result<BatchHeartbeatReply> DecodeBatchHeartbeatReply(const json& body) {
  if (!body.is_object()) return InvalidArgument("heartbeats response: expected an object");
  BatchHeartbeatReply out;
  if (auto epoch = body.find("epoch"); epoch != body.end() && epoch->is_number_unsigned()) {
    out.epoch = epoch->get<uint64_t>();
  }
  auto hosts = body.find("hosts");
  if (hosts == body.end() || !hosts->is_array()) {
    return InvalidArgument("hosts: expected a list of host replies");
  }
  for (size_t i = 0; i < hosts->size(); ++i) {
    const json& entry = (*hosts)[i];
    const std::string where = "hosts[" + std::to_string(i) + "]";
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
        !entry.contains("status") || !entry["status"].is_number_integer()) {
      return InvalidArgument(where + ": expected a name and a status");
    }
    BatchHostReply host{.name = entry["name"].get<std::string>(),
                        .status = entry["status"].get<int>()};
    if (host.status == 200) {
      Result<HeartbeatReply> reply =
          DecodeHeartbeatReply(entry.contains("reply") ? entry["reply"] : json());
      if (!reply) return InvalidArgument(where + ".reply: " + reply.error().message());
      host.reply = std::move(*reply);
    } else if (entry.contains("error") && entry["error"].is_string()) {
      host.error = entry["error"].get<std::string>();
    }
    out.hosts.push_back(std::move(host));
  }
  return out;
}

std::vector<const BatchHostReply*> MatchBatchReply(const BatchHeartbeatReply& reply,
                                                   const std::vector<std::string_view>& sent) {
  std::vector<const BatchHostReply*> matched(sent.size(), nullptr);
  size_t next = 0;  // the first sent host not yet matched
  for (const BatchHostReply& entry : reply.hosts) {
    size_t at = next;
    while (at < sent.size() && sent[at] != entry.name) ++at;
    if (at == sent.size()) continue;  // not sent, or out of order: ignored
    matched[at] = &entry;
    next = at + 1;
  }
  return matched;
}

}  // namespace sluice::wire
