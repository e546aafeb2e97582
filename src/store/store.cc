// Store's shared parts: WriteSync over Write, Role's names, the default two-step load and
// ReadSpec, and OpenUrl's choice of backend.
#include "store/store.h"

#include <algorithm>
#include <future>
#include <utility>

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

Result<Snapshot> Store::LoadAllButJobs() {
  Result<Snapshot> snap = Load();
  if (snap) unread_jobs_ = std::move(snap->jobs);
  if (snap) snap->jobs.clear();
  return snap;
}

Status Store::ReadJobs(JobId first, JobId last, size_t chunk_rows,
                       const std::function<void(std::vector<StoredJob>&&)>& take) {
  chunk_rows = std::max<size_t>(chunk_rows, 1);
  std::vector<StoredJob> chunk;
  for (StoredJob& row : unread_jobs_) {  // by id, as Load returned them
    if (row.id < first || row.id > last) continue;
    chunk.push_back(std::move(row));
    if (chunk.size() == chunk_rows) take(std::exchange(chunk, {}));
  }
  if (!chunk.empty()) take(std::move(chunk));
  // The rows handed over are gone from here; the vector itself once all are.
  std::erase_if(unread_jobs_,
                [&](const StoredJob& row) { return row.id >= first && row.id <= last; });
  if (unread_jobs_.empty()) unread_jobs_ = {};
  return Status::Ok();
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
