#include "core/cycle/events.h"

#include <type_traits>

namespace sluice::core {

Status Apply(const Event& event, Instant now, ClusterState& state) {
  return std::visit(
      [&](const auto& e) -> Status {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, JobSubmitted>) {
          return state.Submit(e.spec);
        } else if constexpr (std::is_same_v<E, JobCancelled>) {
          return state.Cancel(e.job, now);
        } else if constexpr (std::is_same_v<E, JobFinished>) {
          return state.Finish(e.job, now, e.exit_code, e.cause);
        } else if constexpr (std::is_same_v<E, HostAdded>) {
          return state.AddHost(e.host);
        } else if constexpr (std::is_same_v<E, HostChanged>) {
          return state.SetHostState(e.host, e.state);
        } else if constexpr (std::is_same_v<E, HostLost>) {
          return state.SetHostState(e.host, HostState::kUnavail);
        } else {
          static_assert(std::is_same_v<E, ConfigChanged>);
          return state.Reconfigure(e.config);
        }
      },
      event);
}

}  // namespace sluice::core
