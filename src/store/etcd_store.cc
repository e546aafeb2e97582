// EtcdStore (see etcd_store.h): the election, the lease keeper, the group-committing writer.
#include "store/etcd_store.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <thread>
#include <unordered_map>

#include "store/etcd_schema.h"
#include "store/row_codec.h"

namespace sluice::store {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kRetryPause{200};
// Attempts of one chunk's txn that failed with kUnavailable (a member that stopped answering,
// etcd electing a new raft leader) before the write fails.
constexpr int kChunkAttempts = 3;
constexpr int kOpenProbes = 3;  // Open's probes of etcd (kRetryPause apart) before it gives up
constexpr milliseconds kWatchSlice{500};  // bounds how long the campaigner ignores a stop
constexpr int64_t kLoadPage = 1000;
constexpr size_t kOpOverheadBytes = 32;  // protobuf framing of one RequestOp, roughly

// Makes up to `attempts` calls while they fail with kUnavailable (a member that stopped
// answering, etcd electing a raft leader); `pause()` runs between calls and returns false to
// give up early. Returns the last call's result.
template <typename Call, typename Pause>
auto RetryWhileUnavailable(int attempts, Call call, Pause pause) {
  auto result = call();
  for (int attempt = 1; attempt < attempts && !result &&
                        result.error().code() == StatusCode::kUnavailable && pause();
       ++attempt) {
    result = call();
  }
  return result;
}

bool ParseInt(const std::string& text, int64_t& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtoll(text.c_str(), &end, 10);
  return end != nullptr && *end == '\0';
}

Status ParseQuery(const std::string& query, EtcdOptions& out) {
  size_t pos = 0;
  while (pos < query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    const std::string item = query.substr(pos, amp - pos);
    pos = amp + 1;
    const size_t eq = item.find('=');
    int64_t value = 0;
    if (eq == std::string::npos || !ParseInt(item.substr(eq + 1), value) || value <= 0) {
      return InvalidArgument("store url: query item `" + item + "`: expected NAME=POSITIVE");
    }
    const std::string name = item.substr(0, eq);
    if (name == "max-txn-ops") {
      out.max_txn_ops = value;
    } else if (name == "max-request-bytes") {
      out.max_request_bytes = value;
    } else if (name == "compact-revisions") {
      out.compact_revisions = value;
    } else {
      return InvalidArgument("store url: unknown query item `" + name + "`");
    }
  }
  return Status::Ok();
}

size_t OpBytes(const EtcdOp& op) { return op.key.size() + op.value.size() + kOpOverheadBytes; }

// A job id as its keys spell it: 20 digits, so that keys sort by id.
std::string IdDigits(JobId id) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%020lld", static_cast<long long>(id));
  return digits;
}

}  // namespace

Result<EtcdOptions> ParseEtcdUrl(const std::string& url) {
  constexpr std::string_view kScheme = "etcd://";
  if (!url.starts_with(kScheme)) return InvalidArgument("store url " + url + ": not etcd://");
  std::string rest = url.substr(kScheme.size());
  EtcdOptions out;
  if (const size_t q = rest.find('?'); q != std::string::npos) {
    SLUICE_RETURN_IF_ERROR(ParseQuery(rest.substr(q + 1), out));
    rest.resize(q);
  }
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    out.prefix = rest.substr(slash);
    while (out.prefix.size() > 1 && out.prefix.back() == '/') out.prefix.pop_back();
    if (out.prefix == "/") return InvalidArgument("store url " + url + ": empty prefix");
    rest.resize(slash);
  }
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t comma = rest.find(',', pos);
    if (comma == std::string::npos) comma = rest.size();
    const std::string endpoint = rest.substr(pos, comma - pos);
    const size_t colon = endpoint.rfind(':');
    int64_t port = 0;
    if (colon == std::string::npos || colon == 0 || !ParseInt(endpoint.substr(colon + 1), port) ||
        port <= 0 || port > 65535) {
      return InvalidArgument("store url " + url + ": endpoint `" + endpoint +
                             "`: expected HOST:PORT");
    }
    out.endpoints.push_back(endpoint);
    pos = comma + 1;
  }
  return out;
}

EtcdStore::EtcdStore(EtcdOptions options)
    : options_(std::move(options)), url_([this] {
        std::string url = "etcd://";
        for (size_t i = 0; i < options_.endpoints.size(); ++i) {
          url += (i > 0 ? "," : "") + options_.endpoints[i];
        }
        return url + options_.prefix;
      }()) {}

Result<std::unique_ptr<EtcdStore>> EtcdStore::Open(const EtcdOptions& options) {
  if (options.endpoints.empty() || options.lease_seconds < 1 || options.max_txn_ops < 3 ||
      options.max_request_bytes < 4096 || options.prefix.empty()) {
    return InvalidArgument("etcd store: endpoints, lease, limits and prefix must be set");
  }
  EtcdClient probe(options.endpoints, options.request_timeout);
  // A serializable-enough probe: any member that answers will do. A member that is only slow
  // (a stalled fsync, a raft election under load) leaves the next probe to the next member, so
  // a standby is not lost to one late answer; an etcd that no attempt reaches fails the start.
  Result<EtcdRange> range = RetryWhileUnavailable(
      kOpenProbes, [&] { return probe.Range(options.prefix + "/meta/leader", "", 1, 0); },
      [] {
        std::this_thread::sleep_for(kRetryPause);
        return true;
      });
  if (!range && range.error().code() == StatusCode::kUnavailable) return range.error();
  std::unique_ptr<EtcdStore> store(new EtcdStore(options));
  store->campaigner_ = std::thread([s = store.get()] { s->CampaignLoop(); });
  store->keeper_ = std::thread([s = store.get()] { s->KeepAliveLoop(); });
  store->writer_ = std::thread([s = store.get()] { s->WriterLoop(); });
  return store;
}

EtcdStore::~EtcdStore() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  writer_.join();  // drains the queue first
  campaigner_.join();
  keeper_.join();
  // Hand the lead over now rather than after the lease runs out. A store told to act dead
  // (StopKeepAliveForTest) leaves its lease to expire.
  const int64_t lease = lease_id_.load();
  if (lease != 0 && !keepalive_stopped_) {
    EtcdClient client(options_.endpoints, milliseconds(500));
    (void)client.RevokeLease(lease);
  }
}

std::string EtcdStore::JobKey(JobId id) const { return options_.prefix + "/jobs/" + IdDigits(id); }

std::string EtcdStore::SpecKey(JobId id) const {
  return options_.prefix + "/specs/" + IdDigits(id);
}

void EtcdStore::SleepFor(milliseconds d) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [&] { return stopping_; });
}

// Campaign until elected: 1. hold a lease (GrantLease); 2. create the leader key under it in a
// txn that requires the key to be absent; 3. on loss, remember the leader and watch its key
// (WaitForDelete) until it goes, then go to 1.
void EtcdStore::CampaignLoop() {
  EtcdClient client(options_.endpoints, options_.request_timeout);
  const std::string key = LeaderKey();
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || role_ != Role::kCandidate) return;
    }
    if (lease_id_.load() == 0) {
      const Clock::time_point sent = Clock::now();
      Result<EtcdLease> lease = client.GrantLease(options_.lease_seconds);
      if (!lease) {
        SleepFor(kRetryPause);
        continue;
      }
      std::lock_guard lock(mu_);
      lease_valid_until_ = sent + std::chrono::seconds(lease->ttl);
      lease_id_ = lease->id;
    }
    const std::vector<EtcdCompare> absent = {
        {.key = key, .target = EtcdCompare::Target::kCreate, .revision = 0}};
    // The written mark in the same txn: its mod revision is then the epoch, from which this
    // leader's write txns chain (CommitChunk).
    const std::vector<EtcdOp> claim = {
        {.kind = EtcdOp::Kind::kPut, .key = key, .value = options_.candidate, .lease = lease_id_},
        {.kind = EtcdOp::Kind::kPut, .key = WrittenKey(), .value = "claimed"}};
    Result<EtcdTxnResult> txn = client.Txn(absent, claim, key);
    if (!txn) {
      // kNotFound: our lease expired meanwhile; take a new one.
      if (txn.error().code() == StatusCode::kNotFound) lease_id_ = 0;
      SleepFor(kRetryPause);
      continue;
    }
    // Won by this txn, or by an earlier attempt of this claim that was applied and whose answer
    // was lost (the key holds our name under our lease): the epoch is that claim's revision
    // (the written mark's too).
    const bool ours_already = !txn->failure_kvs.empty() &&
                              txn->failure_kvs.front().value == options_.candidate &&
                              txn->failure_kvs.front().lease == lease_id_.load();
    if (txn->succeeded || ours_already) {
      {
        std::lock_guard lock(mu_);
        epoch_ = static_cast<uint64_t>(txn->succeeded ? txn->revision
                                                      : txn->failure_kvs.front().create_revision);
        role_ = Role::kLeader;
        leader_ = options_.candidate;
      }
      cv_.notify_all();
      return;
    }
    {
      std::lock_guard lock(mu_);
      if (!txn->failure_kvs.empty()) leader_ = txn->failure_kvs.front().value;
    }
    if (txn->failure_kvs.empty()) continue;  // deleted in between: try again now
    Result<bool> deleted = client.WaitForDelete(key, txn->revision + 1, kWatchSlice);
    if (!deleted) SleepFor(kRetryPause);
  }
}

// Renew the lease every ttl/3. A renewal that finds the lease gone deposes a leader (a
// candidate just takes a new lease); a renewal that fails leaves lease_valid_until_ as it
// was, so role() turns to kCandidate once the lease may have expired.
void EtcdStore::KeepAliveLoop() {
  EtcdClient client(options_.endpoints, options_.request_timeout);
  const milliseconds period(std::max<int64_t>(options_.lease_seconds * 1000 / 3, 100));
  while (true) {
    SleepFor(period);
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      if (role_ == Role::kDeposed) return;
    }
    const int64_t id = lease_id_.load();
    if (id == 0 || keepalive_stopped_) continue;
    const Clock::time_point sent = Clock::now();
    Result<EtcdLease> renewed = client.KeepAlive(id);
    const bool gone = (renewed && renewed->ttl <= 0) ||
                      (!renewed && renewed.error().code() == StatusCode::kNotFound);
    if (renewed && renewed->ttl > 0) {
      // A leader extends its lead only once a quorum read shows the leader key still its own:
      // an etcd member that was paused while it led answers a renewal as if it still did,
      // after the others have let the lease expire and elected another controller.
      const LeadCheck check = ConfirmLead(client, renewed->raft_term);
      if (check == LeadCheck::kLost) return;  // deposed
      std::lock_guard lock(mu_);
      if (check == LeadCheck::kHeld || role_ != Role::kLeader) {
        lease_valid_until_ = sent + std::chrono::seconds(renewed->ttl);
      }
    } else if (gone) {
      bool leading = false;
      {
        std::lock_guard lock(mu_);
        leading = role_ == Role::kLeader;
      }
      if (leading) {
        Depose(FailedPrecondition("epoch " + std::to_string(epoch_.load()) +
                                  " is fenced: the election lease expired"));
        return;
      }
      lease_id_ = 0;
    }
  }
}

EtcdStore::LeadCheck EtcdStore::ConfirmLead(EtcdClient& client, uint64_t renewal_term) {
  uint64_t epoch = 0;
  {
    std::lock_guard lock(mu_);  // with the role: CampaignLoop sets both under it
    if (role_ != Role::kLeader) return LeadCheck::kUnknown;
    epoch = epoch_.load();
  }
  Result<EtcdRange> key = client.Range(LeaderKey(), "", 1, 0);  // linearizable: a quorum's
  if (!key) return LeadCheck::kUnknown;
  if (!key->kvs.empty() && key->kvs.front().value == options_.candidate &&
      key->kvs.front().create_revision == static_cast<int64_t>(epoch)) {
    // Still ours; the renewal counts if it was answered in the quorum's term (a member that
    // led in an older one renews nothing the quorum knows of).
    return renewal_term >= key->raft_term ? LeadCheck::kHeld : LeadCheck::kUnknown;
  }
  Depose(FencedBy(key->kvs, epoch));
  return LeadCheck::kLost;
}

Status EtcdStore::FencedBy(const std::vector<EtcdKv>& leader_key, uint64_t epoch) {
  std::string holder = "nobody";
  std::lock_guard lock(mu_);
  leader_.reset();  // not this store's any more, whoever holds it
  if (!leader_key.empty()) {
    holder = leader_key.front().value + " (epoch " +
             std::to_string(leader_key.front().create_revision) + ")";
    leader_ = leader_key.front().value;
  }
  return FailedPrecondition("epoch " + std::to_string(epoch) +
                            " is fenced: the leader key is held by " + holder);
}

EtcdClient& EtcdStore::ReachClient() {
  if (!reach_client_) {
    reach_client_ = std::make_unique<EtcdClient>(options_.endpoints, options_.request_timeout);
  }
  return *reach_client_;
}

void EtcdStore::PublishAgentsHeard(int count) {
  const int64_t lease = lease_id_.load();
  if (lease == 0 || role() == Role::kLeader) return;
  if (count == published_heard_ && lease == published_lease_) return;
  const std::string key = HeardPrefix() + options_.candidate;
  const std::vector<EtcdOp> put = {
      {.kind = EtcdOp::Kind::kPut, .key = key, .value = std::to_string(count), .lease = lease}};
  if (!ReachClient().Txn({}, put, "")) return;  // next time
  published_heard_ = count;
  published_lease_ = lease;
}

std::vector<int> EtcdStore::RivalsAgentsHeard() {
  const std::string prefix = HeardPrefix();
  Result<EtcdRange> range = ReachClient().Range(prefix, PrefixRangeEnd(prefix), 64, 0);
  std::vector<int> counts;
  if (!range) return counts;
  for (const EtcdKv& kv : range->kvs) {
    if (kv.key == prefix + options_.candidate) continue;  // ours, from when we stood by
    int count = 0;
    const auto [end, ec] =
        std::from_chars(kv.value.data(), kv.value.data() + kv.value.size(), count);
    if (ec == std::errc() && end == kv.value.data() + kv.value.size()) counts.push_back(count);
  }
  return counts;
}

void EtcdStore::Resign(const Status& why) {
  const int64_t lease = lease_id_.exchange(0);
  if (lease != 0) (void)ReachClient().RevokeLease(lease);
  Depose(why);
}

void EtcdStore::Depose(const Status& why) {
  std::function<void(const Status&)> callback;
  {
    std::lock_guard lock(mu_);
    if (role_ == Role::kDeposed) return;
    role_ = Role::kDeposed;
    deposed_why_ = why;
    callback = deposed_callback_;
  }
  cv_.notify_all();
  if (callback) callback(why);
}

std::vector<EtcdOp> EtcdStore::OpsOf(const WriteBatch& batch, std::vector<JobId>& new_specs) {
  std::vector<EtcdOp> ops;
  const std::string& p = options_.prefix;
  for (const StoredJob& j : batch.jobs) {
    const size_t hash = std::hash<std::string>{}(j.spec);
    auto [known, added] = spec_hashes_.try_emplace(j.id, hash);
    if (added || known->second != hash) {  // a new job, or a spec changed by `modify`
      known->second = hash;
      ops.push_back({.key = SpecKey(j.id), .value = j.spec});
      new_specs.push_back(j.id);
    }
    ops.push_back({.key = JobKey(j.id), .value = EncodeJob(j)});
  }
  for (JobId id : batch.deleted_jobs) {
    ops.push_back({.kind = EtcdOp::Kind::kDelete, .key = JobKey(id)});
    ops.push_back({.kind = EtcdOp::Kind::kDelete, .key = SpecKey(id)});
    spec_hashes_.erase(id);
  }
  for (const StoredHost& h : batch.hosts)
    ops.push_back({.key = p + "/hosts/" + h.name, .value = h.spec});
  if (batch.config_version) {
    ops.push_back(
        {.key = p + "/meta/config_version", .value = std::to_string(*batch.config_version)});
  }
  for (const auto& [key, value] : batch.settings) {
    if (value) {
      ops.push_back({.key = p + "/settings/" + key, .value = std::to_string(*value)});
    } else {
      ops.push_back({.kind = EtcdOp::Kind::kDelete, .key = p + "/settings/" + key});
    }
  }
  for (const auto& [name, spec] : batch.reservations) {
    if (spec) {
      ops.push_back({.key = p + "/reservations/" + name, .value = *spec});
    } else {
      ops.push_back({.kind = EtcdOp::Kind::kDelete, .key = p + "/reservations/" + name});
    }
  }
  return ops;
}

// Packs the group's batches, in queue order, into chunks of at most max_txn_ops distinct keys
// and about max_request_bytes. A batch that fits in one txn is never split (all-or-nothing); a
// larger one (a cycle that starts more jobs than a txn holds) fills as many chunks as it needs,
// in order, and completes with its last. etcd refuses a txn that names a key twice, so a later
// write of the same key replaces the earlier one in the chunk (the txn is atomic: same end
// state).
EtcdStore::ChunkedGroup EtcdStore::ChunkGroup(const std::deque<Pending>& group,
                                              std::vector<Status>& refused) {
  ChunkedGroup chunked;
  std::vector<Chunk>& chunks = chunked.chunks;
  std::lock_guard specs_lock(specs_mu_);
  const size_t max_ops = static_cast<size_t>(options_.max_txn_ops) - 1;  // 1 for the mark
  const size_t max_bytes = static_cast<size_t>(options_.max_request_bytes) * 9 / 10;
  std::unordered_map<std::string, size_t> index;  // key -> position in chunks.back().ops
  size_t bytes = 0;
  const auto fits = [&](size_t ops, size_t more_bytes) {
    return !chunks.empty() && chunks.back().ops.size() + ops <= max_ops &&
           bytes + more_bytes <= max_bytes;
  };
  const auto open_chunk = [&] {
    chunks.emplace_back();
    index.clear();
    bytes = 0;
  };
  for (size_t i = 0; i < group.size(); ++i) {
    const size_t specs_before = chunked.new_specs.size();
    std::vector<EtcdOp> ops = OpsOf(group[i].batch, chunked.new_specs);
    size_t batch_bytes = 0;
    size_t largest = 0;
    for (const EtcdOp& op : ops) {
      batch_bytes += OpBytes(op);
      largest = std::max(largest, OpBytes(op));
    }
    if (largest > max_bytes) {
      refused[i] = InvalidArgument("a key of " + std::to_string(largest) + " bytes exceeds the " +
                                   "etcd store's txn limit (max-request-bytes)");
      for (size_t k = specs_before; k < chunked.new_specs.size(); ++k) {
        spec_hashes_.erase(chunked.new_specs[k]);  // not written: the next write puts it
      }
      chunked.new_specs.resize(specs_before);
      continue;
    }
    const bool whole = ops.size() <= max_ops && batch_bytes <= max_bytes;
    if (whole && !fits(ops.size(), batch_bytes)) open_chunk();
    if (chunks.empty()) open_chunk();
    for (EtcdOp& op : ops) {
      if (!whole && !fits(1, OpBytes(op))) open_chunk();  // only a batch too large splits
      Chunk& chunk = chunks.back();
      bytes += OpBytes(op);
      auto [it, inserted] = index.try_emplace(op.key, chunk.ops.size());
      if (inserted) {
        chunk.ops.push_back(std::move(op));
      } else {
        chunk.ops[it->second] = std::move(op);
      }
    }
    chunks.back().batches.push_back(i);
  }
  return chunked;
}

Status EtcdStore::CommitChunk(EtcdClient& client, Chunk& chunk) {
  const uint64_t epoch = epoch_.load();
  if (written_epoch_ != epoch) {  // the claim put the mark: its revision is the epoch
    written_epoch_ = epoch;
    written_mod_ = static_cast<int64_t>(epoch);
    written_count_ = 0;
  }
  const std::string mark = std::to_string(epoch) + "." + std::to_string(++written_count_);
  chunk.ops.push_back({.key = WrittenKey(), .value = mark});
  // A txn sent and not answered may have been applied, and EtcdClient does not resend it.
  // This one may be resent: it puts whole rows and deletes keys under the fence, and it
  // applies only where the written mark is still where this leader's previous txn left it, so
  // of its attempts one at most is applied, and none after a later txn. Without the resend, a
  // write in flight when etcd's raft leader dies (its proposal is lost with it) failed although
  // a quorum was left.
  const auto attempt = [&] {
    std::vector<EtcdCompare> compares = Fence(epoch);
    compares.push_back(
        {.key = WrittenKey(), .target = EtcdCompare::Target::kMod, .revision = written_mod_});
    if (options_.on_write_txn) options_.on_write_txn(compares, chunk.ops);
    return RetryWhileUnavailable(
        kChunkAttempts, [&] { return client.Txn(compares, chunk.ops, LeaderKey()); },
        [this] {
          {
            std::lock_guard lock(mu_);
            if (stopping_) return false;
          }
          SleepFor(kRetryPause);
          return true;
        });
  };
  Result<EtcdTxnResult> txn = attempt();
  bool applied = false;
  if (txn && !txn->succeeded && HoldsTheFence(*txn, epoch)) {
    // Only the written mark moved: a txn of this leader's was applied meanwhile.
    Result<std::string> moved = FollowWrittenMark(client, epoch);
    if (!moved && moved.error().code() != StatusCode::kFailedPrecondition) {
      chunk.ops.pop_back();
      return moved.error();  // not read: this write fails, the next one follows the mark
    }
    applied = moved && *moved == mark;  // an earlier attempt of this very txn
    if (moved && !applied) txn = attempt();  // one reported failed: this one follows it
  }
  chunk.ops.pop_back();
  if (!txn) return txn.error();
  if (txn->succeeded || applied) {
    if (txn->succeeded) written_mod_ = txn->revision;
    last_revision_ = std::max(last_revision_, written_mod_);
    return Status::Ok();
  }
  Status fenced = FencedBy(txn->failure_kvs, epoch);
  Depose(fenced);
  return fenced;
}

std::vector<EtcdCompare> EtcdStore::Fence(uint64_t epoch) const {
  return {{.key = LeaderKey(),
           .target = EtcdCompare::Target::kCreate,
           .revision = static_cast<int64_t>(epoch)},
          {.key = LeaderKey(), .target = EtcdCompare::Target::kValue, .value = options_.candidate}};
}

bool EtcdStore::HoldsTheFence(const EtcdTxnResult& failed, uint64_t epoch) const {
  return !failed.failure_kvs.empty() && failed.failure_kvs.front().value == options_.candidate &&
         failed.failure_kvs.front().create_revision == static_cast<int64_t>(epoch);
}

Result<std::string> EtcdStore::FollowWrittenMark(EtcdClient& client, uint64_t epoch) {
  Result<EtcdRange> written = client.Range(WrittenKey(), "", 1, 0);
  if (!written) return written.error();
  if (written->kvs.empty() || !written->kvs.front().value.starts_with(std::to_string(epoch) + ".")) {
    return FailedPrecondition("the written mark is not this leader's");  // someone else writes
  }
  written_mod_ = written->kvs.front().mod_revision;
  return written->kvs.front().value;
}

// Group commit: take every queued batch, chunk them (ChunkGroup), commit the chunks in order
// (CommitChunk); after a failed chunk the rest of the group fails with the same Status; then
// run the callbacks in queue order.
void EtcdStore::WriterLoop() {
  EtcdClient client(options_.endpoints, options_.request_timeout);
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() && stopping_) return;
    std::deque<Pending> group;
    group.swap(queue_);
    const Role role = role_;
    const Status deposed = deposed_why_;
    lock.unlock();
    std::vector<Status> statuses(group.size());
    int64_t transactions = 0;
    if (role == Role::kDeposed) {
      std::fill(statuses.begin(), statuses.end(), deposed);
    } else if (epoch_.load() == 0) {
      std::fill(statuses.begin(), statuses.end(),
                FailedPrecondition("this etcd store does not lead (a candidate cannot write)"));
    } else {
      ChunkedGroup chunked = ChunkGroup(group, statuses);
      Status failed;
      for (Chunk& chunk : chunked.chunks) {
        Status status = failed.ok() ? CommitChunk(client, chunk) : failed;
        if (failed.ok()) ++transactions;
        if (!status.ok()) failed = status;
        for (size_t i : chunk.batches) statuses[i] = status;
      }
      if (failed.ok()) {
        MaybeCompact(client);
      } else {
        std::lock_guard specs_lock(specs_mu_);
        for (JobId id : chunked.new_specs) spec_hashes_.erase(id);
      }
    }
    lock.lock();
    stats_.transactions += transactions;
    stats_.batches += static_cast<int64_t>(group.size());
    lock.unlock();
    for (size_t i = 0; i < group.size(); ++i) {
      if (group[i].done) group[i].done(statuses[i]);
    }
    lock.lock();
    committed_ += group.size();
    flushed_cv_.notify_all();
  }
}

void EtcdStore::MaybeCompact(EtcdClient& client) {
  constexpr int64_t kCompactKeep = 100;
  if (options_.compact_revisions <= 0) return;
  if (compacted_revision_ == 0) compacted_revision_ = last_revision_;  // count from the start
  if (last_revision_ - compacted_revision_ < options_.compact_revisions) return;
  // A failure (no quorum, already compacted by etcd itself) is retried after as many again.
  (void)client.Compact(last_revision_ - kCompactKeep);
  compacted_revision_ = last_revision_;
}

void EtcdStore::Write(WriteBatch batch, std::function<void(const Status&)> done) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(Pending{std::move(batch), std::move(done)});
    ++queued_;
  }
  cv_.notify_all();
}

void EtcdStore::Flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = queued_;
  flushed_cv_.wait(lock, [&] { return committed_ >= target; });
}

StoreStats EtcdStore::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

Status EtcdStore::AwaitLeadership(milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return stopping_ || role_ != Role::kCandidate; });
  if (role_ == Role::kLeader) return Status::Ok();
  if (role_ == Role::kDeposed) return deposed_why_;
  return Status(StatusCode::kUnavailable, "not elected within " + std::to_string(timeout.count()) +
                                              " ms; the leader is " + leader_.value_or("unknown"));
}

Role EtcdStore::role() const {
  std::lock_guard lock(mu_);
  if (role_ == Role::kLeader && Clock::now() >= lease_valid_until_) return Role::kCandidate;
  return role_;
}

std::optional<std::string> EtcdStore::leader() const {
  std::lock_guard lock(mu_);
  return leader_;
}

void EtcdStore::SetDeposedCallback(std::function<void(const Status&)> deposed) {
  std::lock_guard lock(mu_);
  deposed_callback_ = std::move(deposed);
}

Status EtcdStore::OverwriteEpochForTest(uint64_t /*epoch*/) {
  return FailedPrecondition("etcd store: a rival is a second store on the same prefix");
}

// Reads the prefix in pages at one revision, so the snapshot is consistent.
Result<Snapshot> EtcdStore::Load() {
  Flush();
  EtcdClient client(options_.endpoints, options_.request_timeout);
  const std::string base = options_.prefix + "/";
  const std::string end = PrefixRangeEnd(base);
  Snapshot snap;
  snap.epoch = epoch_.load();
  // The schema first, as the leader: a newer one is refused, an older one upgraded (R-OPS-5).
  Result<SchemaOpened> schema = OpenEtcdSchema(client, options_.prefix, Fence(snap.epoch),
                                               "etcd prefix " + options_.prefix + " of " + url_);
  if (!schema) return schema.error();
  snap.schema = *schema;
  std::vector<EtcdKv> hosts;
  // Rows read without their spec, by id -> position in snap.jobs; "jobs/" sorts before
  // "specs/", so every row is read before the specs.
  std::unordered_map<JobId, size_t> awaiting_spec;
  std::vector<std::pair<JobId, size_t>> spec_hashes;  // of the specs read from their keys
  std::string from = base;
  int64_t revision = 0;
  while (true) {
    Result<EtcdRange> page = client.Range(from, end, kLoadPage, revision);
    if (!page) return page.error();
    if (revision == 0) revision = page->revision;
    if (page->kvs.empty()) break;
    const std::string last = page->kvs.back().key;
    for (EtcdKv& kv : page->kvs) {
      const std::string name = kv.key.substr(base.size());
      int64_t number = 0;
      if (name.starts_with("jobs/")) {
        bool has_spec = false;
        Result<StoredJob> job = DecodeJob(kv.value, kv.key, &has_spec);
        if (!job) return job.error();
        if (!has_spec) awaiting_spec.emplace(job->id, snap.jobs.size());
        snap.jobs.push_back(std::move(*job));
      } else if (name.starts_with("specs/") && ParseInt(name.substr(6), number)) {
        // A spec without its row was put by a write that failed after its txn; the job was
        // never acknowledged, so it is left out.
        if (auto it = awaiting_spec.find(number); it != awaiting_spec.end()) {
          spec_hashes.emplace_back(number, std::hash<std::string>{}(kv.value));
          snap.jobs[it->second].spec = std::move(kv.value);
          awaiting_spec.erase(it);
        }
      } else if (name.starts_with("hosts/")) {
        hosts.push_back(std::move(kv));
      } else if (name.starts_with("reservations/")) {
        snap.reservations[name.substr(13)] = std::move(kv.value);
      } else if (name.starts_with("settings/") && ParseInt(kv.value, number)) {
        snap.settings[name.substr(9)] = number;
      } else if (name == "meta/config_version" && ParseInt(kv.value, number)) {
        snap.config_version = number;
      }
    }
    if (!page->more) break;
    from = last + std::string(1, '\0');
  }
  if (!awaiting_spec.empty()) {
    const JobId id = std::min_element(awaiting_spec.begin(), awaiting_spec.end())->first;
    return Internal(JobKey(id) + ": a job row without its spec (" + SpecKey(id) + " is missing)");
  }
  {
    std::lock_guard specs_lock(specs_mu_);
    for (const auto& [id, hash] : spec_hashes) spec_hashes_[id] = hash;
  }
  // Hosts in the order they were last written, as the SQLite store returns them.
  std::stable_sort(hosts.begin(), hosts.end(), [](const EtcdKv& a, const EtcdKv& b) {
    return a.mod_revision < b.mod_revision;
  });
  for (EtcdKv& kv : hosts) {
    snap.hosts.push_back(StoredHost{kv.key.substr(base.size() + 6), std::move(kv.value)});
  }
  return snap;
}

}  // namespace sluice::store
