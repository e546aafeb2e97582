// Store's shared parts: WriteSync over Write, Role's names, the default ReadSpec, and OpenUrl's
// choice of backend.
#include "store/store.h"

#include <future>

#include "store/etcd_store.h"

namespace sluice::store {

std::string_view ToString(Role role) {
  switch (role) {
    case Role::kCandidate:
      return "candidate";
    case Role::kLeader:
      return "leader";
    case Role::kDeposed:
      return "deposed";
  }
  return "unknown";
}

Status Store::WriteSync(WriteBatch batch) {
  std::promise<Status> promise;
  std::future<Status> future = promise.get_future();
  Write(std::move(batch), [&promise](const Status& s) { promise.set_value(s); });
  return future.get();
}

Result<std::string> Store::ReadSpec(JobId /*id*/) {
  return FailedPrecondition("this store does not serve specs by id");
}

Result<std::unique_ptr<Store>> Store::OpenUrl(const std::string& url, const OpenOptions& options) {
  if (url.starts_with("etcd://")) {
    Result<EtcdOptions> etcd = ParseEtcdUrl(url);
    if (!etcd) return etcd.error();
    etcd->candidate = options.candidate;
    etcd->lease_seconds = options.lease_seconds;
    Result<std::unique_ptr<EtcdStore>> store = EtcdStore::Open(*etcd);
    if (!store) return store.error();
    return std::unique_ptr<Store>(std::move(*store));
  }
  if (url.find("://") != std::string::npos) {
    return InvalidArgument("store url " + url + ": expected a directory or etcd://HOST:PORT");
  }
  return Open(url);
}

}  // namespace sluice::store
