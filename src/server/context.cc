#include "server/context.h"

#include <utility>

namespace sluice::server {

ServerContext::ServerContext(Deps deps)
    : clock_(std::move(deps.clock)),
      options_(std::move(deps.options)),
      log_(std::move(deps.log)),
      state_(std::move(deps.state)),
      writes_({.store = deps.store,
               .mu = &mu_,
               .clock = clock_,
               .log = log_,
               .after_commit = [this] { wakeups_.WakeAll(); }}),
      cycle_(mu_),
      wakeups_(mu_) {}

Status ServerContext::ApplyLocked(const core::Event& event, const std::string& what) {
  SLUICE_DCHECK(mu_.HeldByThisThread());
  Status s = core::Apply(event, Now(), state_);
  if (!s.ok() && !what.empty()) log_->error("{}: {}", what, s.message());
  return s;
}

void ServerContext::Stop() {
  stopping_ = true;
  cycle_.Stop();
  writes_.Stop();
  wakeups_.WakeAll();
}

}  // namespace sluice::server
