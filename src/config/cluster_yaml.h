// Loads the cluster YAML of SPEC §2 into a core::ClusterConfig (a driver: uses yaml-cpp).
//
// Every error is kInvalidArgument with a message `<file>:<line>: <field path>: <what>`, e.g.
// `cluster.yaml:12: queues[2].max_capacity: 140 > 100`; lines are 1-based. Unknown keys are
// errors (a typo must not silently drop a setting). Host name ranges `h[001-064]` are expanded
// here, in hosts, host_groups and limit host scopes. No yaml-cpp exception escapes this API.
//
// Checks (SPEC §2):
//   - capacity, max_capacity and user_limit_pct within 0–100; max_capacity >= capacity;
//     guaranteed capacities sum to at most 100 (+1e-9);
//   - numbers are numbers: a string (quoted or not) where a number is expected is an error;
//   - host, queue and limit names are unique; host groups and queue `hosts` name defined hosts
//     and groups; default_queue names a queue; at least one queue exists (hosts may be empty:
//     agents may register later);
//   - limits name only defined resources (a host resource of some host, or a shared
//     resource), scope at most one of per_X / X per dimension, and cap at least one of slots,
//     jobs or a resource;
//   - a queue's default_resreq parses and names only defined resources; its windows follow
//     core/model/window.h ("19:00-07:00" daily, "Fri 18:00-Mon 08:00" weekly); fairshare maps
//     users (and `default`) to positive shares; fairshare_half_life >= 1 s; preemptive and
//     preemptable are booleans; preempt_grace (default 30 s) is a non-negative integer;
//   - `health_check` (top level and per host) as config/health_yaml.h says.
//
// Defaults: the top-level `health_check` is every host's that sets none of its own (a host's
// `health_check: none` turns it off for that host; AuthConfig::health keeps both).
// `queue_defaults` supplies every queue key but `name` that a queue omits. Then,
// NOTE: when at least one queue has a `capacity` (its own or from queue_defaults), every queue
// without one gets `capacity = 0.0` (guaranteed nothing, may grow to its max_capacity); when no
// queue has one, `capacity` stays unset everywhere (capacity scheduling is off).
// `max_bypass` defaults to 50 and `max_head_wait` to 3600 s (QueueSpec defaults).
//
// Limit scopes: `per_user: all` sets LimitScope{set, per_each, names = {}}; `users: [a, b]`
// sets LimitScope{set, !per_each, names = {a, b}}. In host scopes a name may also be a range or
// a host group, which is expanded to host names.
//
// Implements SPEC §2 (cluster configuration), R-Q-2 (limit scopes, data side).
// Thread-safety: free functions without shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "core/model/config.h"
#include "core/model/health_check.h"

namespace sluice::config {

// ExpandHostRange refuses a range of more names than this (`h[1-99999999]` is a typo, not a
// cluster), and one file may not expand more than kMaxExpandedHostNames host names in total,
// so hostile input cannot exhaust memory. The budget counts every name a range, a host group
// or a limit host scope expands to, and every copy expansion makes of a host entry's
// resources, attributes and tags (`h[1-1000]` with 3 resources costs 4000).
inline constexpr size_t kMaxHostRangeNames = 100'000;
inline constexpr size_t kMaxExpandedHostNames = 1'000'000;

// The `auth:` section (R-SRV-5b): the agent token and the users' tokens. The core never
// sees it; the server does. Tokens are non-empty and distinct; user names are unique.
// A token is given in clear (`token`) or as the lowercase hex SHA-256 of its bytes
// (`token_sha256`, 64 characters): exactly one of the two is set (docs/security.md).
struct AuthUser {
  std::string name;
  std::string token;
  bool admin = false;
  std::string unix_user;     // the UNIX account its jobs run as (R-SEC-1); empty: `name`
  std::string token_sha256;  // after `admin`: positional initializers {name, token, admin} stay
};
// `auth.munge: {socket: PATH}` (R-SEC-2): requests may carry MUNGE credentials.
struct MungeConfig {
  bool enabled = false;
  std::string socket = "/run/munge/munge.socket.2";
};
// `auth.agents[]` (issue 19): an agent credential bound to the hosts it may serve: a token
// (clear or SHA-256) and the host names (ranges expanded). The shared `agent_token` serves any
// host: it is the less safe option (one stolen token speaks for every host).
struct AgentCredential {
  std::vector<std::string> hosts;
  std::string token;
  std::string token_sha256;
};
// `quotas:` (issue 19; config/quota_yaml.h): waiting jobs (pending or held) a submission may
// bring a user or a queue to. Unset: no limit. The core never sees them.
struct QueueQuota {
  std::optional<int64_t> max_pending;           // every user's waiting jobs in the queue
  std::optional<int64_t> max_pending_per_user;  // one user's waiting jobs in the queue
};
struct Quotas {
  std::optional<int64_t> max_pending_per_user;  // one user's waiting jobs, all queues together
  std::map<std::string, QueueQuota> queues;     // by queue name
  // One user's array elements that are not jobs yet, all arrays together (issue 48: a user's
  // loop of million-element arrays grew the server by ~7 bytes an element without bound).
  // Set by default: five arrays of the largest size a submission may have.
  int64_t max_array_elements_per_user = 5'000'000;
  // No job quota (the element cap always holds).
  bool empty() const { return !max_pending_per_user && queues.empty(); }
};

// The `jobs:` section (config/jobs_yaml.h): what the server does to every submission.
struct JobPolicy {
  // Variables of the submitter's environment that never travel with a job (R-SEC; issue 47):
  // glob patterns (`*` matches any run of characters). `env_allow`, when not empty, is the
  // only variables that travel (the deny list still applies to them).
  std::vector<std::string> env_deny = {"SLUICE_TOKEN", "SLUICE_*_TOKEN", "MUNGE_*"};
  std::vector<std::string> env_allow;
  // Where a job's output goes when it names none (`-o`), relative to its working directory,
  // as Slurm's slurm-%j.out: `%j` the job id, `%A`/`%a` an array's id and index. Empty: the
  // output is discarded (/dev/null).
  std::string default_output = "sluice-%j.out";
  std::string default_array_output = "sluice-%A_%a.out";
};

// `reservations: {user_reservations: {...}}` (issue 42, R-RSV-1; config/reservation_policy_yaml.h):
// whether users who are not administrators may make advance reservations of their own, and
// within what. Absent (`enabled` false): only administrators make reservations.
struct UserReservationPolicy {
  bool enabled = false;
  std::optional<int64_t> max_hosts;      // unset: no cap on the hosts of one reservation
  std::optional<Duration> max_duration;  // unset: no cap on one window's length (seconds)
  // Who may: these users and the members of these groups; both empty: every user.
  std::vector<std::string> users;
  std::vector<std::string> groups;
};

// `health_check` (R-OPS-4; config/health_yaml.h): the top-level one is every host's default
// (hosts agents add included), a host entry's own overrides it (nullopt: `none`).
struct HealthChecks {
  std::optional<core::HealthCheck> all;
  std::map<std::string, std::optional<core::HealthCheck>, std::less<>> hosts;
  // The check `host` runs; nullopt: none.
  std::optional<core::HealthCheck> For(std::string_view host) const;
};

struct AuthConfig {
  std::string agent_token;  // empty (and no digest, no MUNGE): no agent may connect
  std::string agent_token_sha256;
  std::vector<AgentCredential> agents;  // per-host (or per-host-group) agent tokens
  std::vector<AuthUser> users;
  // `auth.allow_dynamic_hosts`: agents may register host names the YAML does not list (and
  // such hosts are restored after a restart); off, they are refused (issue 19).
  bool allow_dynamic_hosts = false;
  bool allow_root_jobs = false;     // accept jobs whose account has uid 0 (R-SEC-1)
  std::vector<std::string> admins;  // `auth.admins`: administrators by account or user name
  MungeConfig munge;
  // The `quotas:` and `jobs:` sections (sections of their own) travel with the auth settings:
  // all are the server's alone, read at start and at each reconfiguration.
  Quotas quotas;
  JobPolicy jobs;
  HealthChecks health;  // the `health_check` keys, which the controller hands to agents
  UserReservationPolicy user_reservations;  // the `reservations:` section
};

// Parses YAML text; `filename` is used in error messages only. When `auth` is given, the
// `auth:` section is stored there (it is checked either way).
// Returns the config, or kInvalidArgument naming `filename:line: field`.
Result<core::ClusterConfig> ParseClusterConfig(std::string_view text, std::string_view filename,
                                               AuthConfig* auth = nullptr);

// Reads and parses a file; messages name `path` as the file.
// Returns kNotFound naming `path` if the file cannot be read, else as ParseClusterConfig.
Result<core::ClusterConfig> LoadClusterConfig(const std::string& path, AuthConfig* auth = nullptr);

// Expands `prefix[lo-hi]suffix` into lo..hi; `h[001-064]` -> h001 ... h064 (zero-padded to the
// width of the bounds' text, which must then be equal), `h[1-3]` -> h1, h2, h3. A name without
// brackets is returned as is. Names may hold letters, digits, `-`, `.` and `_` only.
// Returns kInvalidArgument (without a location: callers add it) for an empty name, lo > hi,
// non-numeric bounds, an unclosed bracket, more than one range, or more than
// kMaxHostRangeNames names.
Result<std::vector<std::string>> ExpandHostRange(std::string_view pattern);

}  // namespace sluice::config
