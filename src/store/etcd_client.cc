// EtcdClient over grpc++ with the stubs generated from store/etcd_rpc.proto (see
// etcd_client.h).
#include "store/etcd_client.h"

#include <google/protobuf/arena.h>
#include <grpcpp/grpcpp.h>

#include "store/etcd_rpc.grpc.pb.h"

namespace sluice::store {
namespace {

namespace pb = etcdserverpb;
using std::chrono::milliseconds;
using std::chrono::system_clock;

// How long a call waits for a connection before it counts as not sent and moves on.
constexpr milliseconds kConnectTimeout(300);

// etcd's gRPC code to ours.
Status GrpcError(grpc::StatusCode code, const std::string& message) {
  const std::string text = "etcd: " + message;
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      return InvalidArgument(text);
    case grpc::StatusCode::NOT_FOUND:
      return NotFound(text);
    case grpc::StatusCode::FAILED_PRECONDITION:
      return FailedPrecondition(text);
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
      return Status(StatusCode::kPermissionDenied, text);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:  // e.g. a request over etcd's size limit
      return Status(StatusCode::kResourceExhausted, text);
    default:  // Unavailable, DeadlineExceeded, Aborted, Unknown...: try again later
      return Status(StatusCode::kUnavailable, text);
  }
}

EtcdKv ToKv(pb::KeyValue& kv) {
  return EtcdKv{.key = std::move(*kv.mutable_key()),
                .value = std::move(*kv.mutable_value()),
                .create_revision = kv.create_revision(),
                .mod_revision = kv.mod_revision(),
                .lease = kv.lease()};
}

void SetCompare(pb::Compare& out, const EtcdCompare& c) {
  out.set_key(c.key);  // result EQUAL is proto3's default
  switch (c.target) {
    case EtcdCompare::Target::kCreate:
      out.set_target(pb::Compare::CREATE);
      out.set_create_revision(c.revision);
      break;
    case EtcdCompare::Target::kMod:
      out.set_target(pb::Compare::MOD);
      out.set_mod_revision(c.revision);
      break;
    case EtcdCompare::Target::kValue:
      out.set_target(pb::Compare::VALUE);
      out.set_value(c.value);
      break;
  }
}

void SetOp(pb::RequestOp& out, const EtcdOp& op) {
  if (op.kind == EtcdOp::Kind::kDelete) {
    out.mutable_request_delete_range()->set_key(op.key);
    return;
  }
  pb::PutRequest& put = *out.mutable_request_put();
  put.set_key(op.key);
  put.set_value(op.value);
  put.set_lease(op.lease);
}

}  // namespace

std::string PrefixRangeEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<uint8_t>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<uint8_t>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

class EtcdClient::Connection {
 public:
  explicit Connection(const std::string& endpoint) {
    grpc::ChannelArguments args;
    // A connection of this client's own (not shared with the store's other threads), as
    // their calls are: a watch or a large txn does not queue behind another's.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetMaxReceiveMessageSize(-1);  // a Load's range pages
    // A restarted member is tried again within half a second (gRPC's default backoff grows to
    // two minutes). GRPC_ARG_MIN_RECONNECT_BACKOFF_MS is left alone: it is the timeout of
    // each connection attempt, which a remote member may need more of.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
    channel_ = grpc::CreateCustomChannel(endpoint, grpc::InsecureChannelCredentials(), args);
    kv_ = pb::KV::NewStub(channel_);
    lease_ = pb::Lease::NewStub(channel_);
    watch_ = pb::Watch::NewStub(channel_);
  }

  // True when the channel is connected or connects within kConnectTimeout.
  // A channel that failed to connect stays in TRANSIENT_FAILURE until it is READY again, and
  // with the synchronous API its reconnection attempts run only while a call or a wait is on
  // it: so this waits on it (an early return left a member that had been down more than a
  // few seconds unused for good), and first cuts the backoff short, as the member may be
  // back.
  bool Connect() {
    const auto deadline = system_clock::now() + kConnectTimeout;
    grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE) {
      grpc::experimental::ChannelResetConnectionBackoff(channel_.get());
    }
    while (state != GRPC_CHANNEL_READY) {
      if (state == GRPC_CHANNEL_SHUTDOWN) return false;
      if (!channel_->WaitForStateChange(state, deadline)) return false;
      state = channel_->GetState(/*try_to_connect=*/true);
    }
    return true;
  }

  pb::KV::Stub& kv() { return *kv_; }
  pb::Lease::Stub& lease() { return *lease_; }
  pb::Watch::Stub& watch() { return *watch_; }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::KV::Stub> kv_;
  std::unique_ptr<pb::Lease::Stub> lease_;
  std::unique_ptr<pb::Watch::Stub> watch_;
};

EtcdClient::EtcdClient(std::vector<std::string> endpoints, milliseconds timeout)
    : endpoints_(std::move(endpoints)), timeout_(timeout) {
  for (const std::string& e : endpoints_) connections_.push_back(std::make_unique<Connection>(e));
}

EtcdClient::~EtcdClient() = default;

std::string EtcdClient::FailOver(const char* method) {
  std::string where = "etcd " + endpoints_[current_] + " " + method + ": ";
  current_ = (current_ + 1) % endpoints_.size();
  return where;
}

template <class Rpc>
Status EtcdClient::Invoke(const char* method, size_t request_bytes, Rpc&& rpc) {
  std::string last_error = "no endpoint";
  // A large txn (thousands of rows, megabytes) takes etcd longer to decode, log and apply than
  // the timeout meant for detecting a lost member: 1 ms more per KiB sent (8 s for 8 MiB).
  const milliseconds wait = timeout_ + milliseconds(request_bytes / 1024);
  for (size_t attempt = 0; attempt < endpoints_.size(); ++attempt) {
    Connection& connection = *connections_[current_];
    if (!connection.Connect()) {
      last_error = FailOver(method) + "cannot connect";
      continue;  // not sent: the next endpoint may serve it
    }
    grpc::ClientContext context;
    context.set_deadline(system_clock::now() + wait);
    const grpc::Status status = rpc(connection, context);
    if (status.ok()) return Status::Ok();
    // Sent: maybe applied, so not resent here; maybe a member without quorum, so the next
    // call starts at the next endpoint.
    return GrpcError(status.error_code(), FailOver(method) + status.error_message());
  }
  return Status(StatusCode::kUnavailable, last_error);
}

Result<EtcdRange> EtcdClient::Range(const std::string& key, const std::string& range_end,
                                    int64_t limit, int64_t revision) {
  pb::RangeRequest request;
  request.set_key(key);
  request.set_range_end(range_end);
  request.set_limit(limit);
  request.set_revision(revision);
  google::protobuf::Arena arena;  // a page of a Load holds thousands of keys
  auto* response = google::protobuf::Arena::CreateMessage<pb::RangeResponse>(&arena);
  Status status = Invoke("Range", request.ByteSizeLong(), [&](Connection& c, auto& context) {
    return c.kv().Range(&context, request, response);
  });
  if (!status.ok()) return status;
  EtcdRange out{.revision = response->header().revision(),
                .raft_term = response->header().raft_term(),
                .more = response->more()};
  out.kvs.reserve(response->kvs_size());
  for (pb::KeyValue& kv : *response->mutable_kvs()) out.kvs.push_back(ToKv(kv));
  return out;
}

// A successful txn's answer lists one response per operation; only `succeeded` and the header
// are read from it, and the failure branch's range.
Result<EtcdTxnResult> EtcdClient::Txn(const std::vector<EtcdCompare>& compares,
                                      const std::vector<EtcdOp>& success,
                                      const std::string& failure_range_key) {
  google::protobuf::Arena arena;  // one allocation for a txn of thousands of rows
  auto* request = google::protobuf::Arena::CreateMessage<pb::TxnRequest>(&arena);
  for (const EtcdCompare& c : compares) SetCompare(*request->add_compare(), c);
  request->mutable_success()->Reserve(static_cast<int>(success.size()));
  for (const EtcdOp& op : success) SetOp(*request->add_success(), op);
  if (!failure_range_key.empty()) {
    request->add_failure()->mutable_request_range()->set_key(failure_range_key);
  }
  auto* response = google::protobuf::Arena::CreateMessage<pb::TxnResponse>(&arena);
  Status status = Invoke("Txn", request->ByteSizeLong(), [&](Connection& c, auto& context) {
    return c.kv().Txn(&context, *request, response);
  });
  if (!status.ok()) return status;
  EtcdTxnResult out{.succeeded = response->succeeded(), .revision = response->header().revision()};
  if (!out.succeeded) {
    for (pb::ResponseOp& r : *response->mutable_responses()) {
      if (!r.has_response_range()) continue;
      for (pb::KeyValue& kv : *r.mutable_response_range()->mutable_kvs()) {
        out.failure_kvs.push_back(ToKv(kv));
      }
    }
  }
  return out;
}

Result<EtcdLease> EtcdClient::GrantLease(int64_t ttl_seconds) {
  pb::LeaseGrantRequest request;
  request.set_ttl(ttl_seconds);
  pb::LeaseGrantResponse response;
  Status status = Invoke("LeaseGrant", 0, [&](Connection& c, auto& context) {
    return c.lease().LeaseGrant(&context, request, &response);
  });
  if (!status.ok()) return status;
  if (response.id() == 0) return Internal("etcd: lease grant answered no lease");
  return EtcdLease{.id = response.id(), .ttl = response.ttl()};
}

// One request and one answer on a LeaseKeepAlive stream, then the stream is closed.
Result<EtcdLease> EtcdClient::KeepAlive(int64_t lease_id) {
  pb::LeaseKeepAliveRequest request;
  request.set_id(lease_id);
  pb::LeaseKeepAliveResponse response;
  bool answered = false;
  Status status = Invoke("LeaseKeepAlive", 0, [&](Connection& c, grpc::ClientContext& context) {
    auto stream = c.lease().LeaseKeepAlive(&context);
    answered = stream->Write(request) && stream->Read(&response);
    stream->WritesDone();
    return stream->Finish();
  });
  if (!status.ok()) return status;
  if (!answered) return Internal("etcd: lease keepalive closed without an answer");
  return EtcdLease{.id = lease_id,
                   .ttl = std::max<int64_t>(response.ttl(), 0),
                   .raft_term = response.header().raft_term()};
}

Status EtcdClient::RevokeLease(int64_t lease_id) {
  pb::LeaseRevokeRequest request;
  request.set_id(lease_id);
  pb::LeaseRevokeResponse response;
  return Invoke("LeaseRevoke", 0, [&](Connection& c, auto& context) {
    return c.lease().LeaseRevoke(&context, request, &response);
  });
}

Status EtcdClient::Compact(int64_t revision) {
  pb::CompactionRequest request;
  request.set_revision(revision);
  pb::CompactionResponse response;
  return Invoke("Compact", 0, [&](Connection& c, auto& context) {
    return c.kv().Compact(&context, request, &response);
  });
}

Result<bool> EtcdClient::WaitForDelete(const std::string& key, int64_t start_revision,
                                       milliseconds wait) {
  Connection& connection = *connections_[current_];
  if (!connection.Connect()) {
    return Status(StatusCode::kUnavailable, FailOver("Watch") + "cannot connect");
  }
  grpc::ClientContext context;
  const auto start = system_clock::now();
  context.set_deadline(start + wait);
  auto stream = connection.watch().Watch(&context);
  pb::WatchRequest request;
  request.mutable_create_request()->set_key(key);
  request.mutable_create_request()->set_start_revision(start_revision);
  bool deleted = false;
  bool canceled = false;  // by etcd: e.g. start_revision was compacted
  if (stream->Write(request)) {
    pb::WatchResponse response;
    while (!deleted && !canceled && stream->Read(&response)) {
      for (const pb::Event& event : response.events()) {
        if (event.type() == pb::Event::DELETE) deleted = true;
      }
      canceled = response.canceled();
    }
  }
  context.TryCancel();
  const grpc::Status status = stream->Finish();
  if (deleted) return true;
  if (!canceled && (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                    system_clock::now() - start >= wait)) {
    return false;  // waited the whole time: no event
  }
  std::string why = status.error_message();
  if (canceled) why = "canceled by etcd";
  if (why.empty()) why = "the stream ended";
  return Status(StatusCode::kUnavailable, FailOver("Watch") + why);
}

}  // namespace sluice::store
