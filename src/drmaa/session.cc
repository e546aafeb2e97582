#include "drmaa/session.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "client/array_format.h"
#include "client/http_transport.h"
#include "drmaa/drmaa.h"
#include "drmaa/job_status.h"

namespace sluice::drmaa {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using std::chrono::milliseconds;

constexpr size_t kIdleClients = 8;
constexpr milliseconds kFirstPoll{50};
constexpr milliseconds kLastPoll{1000};
// How long a job cancelled as it ran may show no exit code before drmaa_wait reports it
// signalled anyway: its agent kills it (SIGTERM, then SIGKILL after the kill grace, 10 s by
// default) and reports at once, but an agent whose host was lost meanwhile never reports.
constexpr std::chrono::seconds kKillReportGrace{60};
// How long drmaa_init looks for a controller that answers: a portal told the wrong URL hears
// so within seconds, not after the 30 s the CLI gives an HA failover (later calls keep those).
constexpr std::chrono::seconds kInitFollow{3};

// Why a controller list names something that is not a Sluice controller URL, or "".
std::string BadScheme(const std::string& servers) {
  size_t pos = 0;
  while (pos <= servers.size()) {
    const size_t comma = std::min(servers.find(',', pos), servers.size());
    const std::string url = servers.substr(pos, comma - pos);
    if (!url.starts_with("http://") && !url.starts_with("https://")) {
      return "'" + url + "': expected http://HOST:PORT or https://HOST:PORT";
    }
    pos = comma + 1;
  }
  return "";
}

Error NoSession() {
  return Error(DRMAA_ERRNO_NO_ACTIVE_SESSION, "no active DRMAA session: call drmaa_init first");
}

// A DRMAA job id as run_job and run_bulk_jobs return them: "ID" or "ID[INDEX]".
Expected<client::JobRef> ParseJobId(std::string_view text) {
  Result<client::JobRef> ref = client::ParseJobRef(text);
  if (!ref || ref->index.find('-') != std::string::npos) {
    return Error(DRMAA_ERRNO_INVALID_JOB, "job id '" + std::string(text) +
                                              "': expected ID or ID[INDEX], as drmaa_run_job "
                                              "and drmaa_run_bulk_jobs return them");
  }
  return *ref;
}

std::string HomeDirectory() {
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') return home;
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(getuid(), &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr) {
    return found->pw_dir;
  }
  return "/";
}

// Where and when this process submits: BuildSubmission's view of the machine.
SubmitContext LocalContext() {
  std::error_code error;
  return SubmitContext{
      .submit_dir = std::filesystem::current_path(error).string(),
      .home = HomeDirectory(),
      .now = static_cast<int64_t>(std::time(nullptr)),
      .is_directory =
          [](const std::string& path) {
            std::error_code ignored;
            return std::filesystem::is_directory(path, ignored);
          },
  };
}

// The job object of `id` once it has ended for DRMAA (KillReported, or its report overdue);
// nothing while it has not. `kill_pending` remembers when a job was first seen cancelled
// without its kill reported.
Expected<std::optional<json>> EndedJob(client::RestClient& rest, const std::string& id,
                                       std::map<std::string, Clock::time_point>& kill_pending) {
  Expected<client::JobRef> ref = ParseJobId(id);
  if (!ref) return ref.error();
  Result<json> job = rest.Get(ref->Path());
  if (!job) return ErrorFromStatus(job.error(), Call::kJob);
  if (!HasEnded(*job)) return std::optional<json>();
  if (!KillReported(*job)) {
    const auto [first_seen, inserted] = kill_pending.emplace(id, Clock::now());
    if (Clock::now() - first_seen->second < kKillReportGrace) return std::optional<json>();
  }
  return std::optional<json>(std::move(*job));
}

bool IsInconsistentState(int code) {
  return code == DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE ||
         code == DRMAA_ERRNO_RESUME_INCONSISTENT_STATE ||
         code == DRMAA_ERRNO_HOLD_INCONSISTENT_STATE ||
         code == DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE;
}

}  // namespace

// A RestClient leased from the session's pool for one call, returned at its end.
class Session::Lease {
 public:
  Lease(Session& session, uint64_t generation, std::unique_ptr<client::RestClient> client)
      : session_(&session), generation_(generation), client_(std::move(client)) {}
  Lease(Lease&& other) noexcept = default;
  Lease& operator=(Lease&&) = delete;
  ~Lease() {
    if (client_) session_->Return(generation_, std::move(client_));
  }

  client::RestClient& rest() { return *client_; }
  uint64_t generation() const { return generation_; }

 private:
  Session* session_;
  uint64_t generation_;
  std::unique_ptr<client::RestClient> client_;
};

// When a wait gives up: never (DRMAA_TIMEOUT_WAIT_FOREVER) or `timeout` seconds from now.
struct Session::Deadline {
  std::optional<Clock::time_point> at;

  static Expected<Deadline> After(long timeout) {
    if (timeout < DRMAA_TIMEOUT_WAIT_FOREVER) {
      return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                   "timeout " + std::to_string(timeout) +
                       ": expected seconds, DRMAA_TIMEOUT_WAIT_FOREVER (-1) or "
                       "DRMAA_TIMEOUT_NO_WAIT (0)");
    }
    // Beyond a century is for ever (and keeps the clock's arithmetic from overflowing).
    constexpr long kCentury = 100L * 366 * 24 * 3600;
    if (timeout == DRMAA_TIMEOUT_WAIT_FOREVER || timeout > kCentury) return Deadline{};
    return Deadline{Clock::now() + std::chrono::seconds(timeout)};
  }
};

Session& ProcessSession() {
  static Session* const session = new Session();
  return *session;
}

Error Session::Open(std::string_view contact) {
  {
    std::lock_guard lock(mu_);
    if (active_ || opening_) {
      return Error(DRMAA_ERRNO_ALREADY_ACTIVE_SESSION,
                   "a DRMAA session is already open in this process (drmaa_exit closes it)");
    }
    opening_ = true;
  }
  // 1. The controllers and credentials, as the CLI finds them.
  const char* server_env = std::getenv("SLUICE_SERVER");
  const bool by_default = contact.empty();
  const auto failed = [&](Error error) {
    std::lock_guard lock(mu_);
    opening_ = false;
    return error;
  };
  Result<client::ClientOptions> options =
      client::ResolveClientOptions(std::string(contact), "", "");
  if (!options) {
    if (by_default && (server_env == nullptr || server_env[0] == '\0')) {
      return failed(Error(DRMAA_ERRNO_NO_DEFAULT_CONTACT_STRING_SELECTED,
                          "no contact string given and SLUICE_SERVER is not set: expected a "
                          "controller URL such as http://HOST:PORT"));
    }
    return failed(Error(by_default ? DRMAA_ERRNO_DEFAULT_CONTACT_STRING_ERROR
                                   : DRMAA_ERRNO_INVALID_CONTACT_STRING,
                        (by_default ? "SLUICE_SERVER: " : "contact: ") + options.error().message()));
  }
  if (const std::string bad = BadScheme(options->server); !bad.empty()) {
    return failed(Error(by_default ? DRMAA_ERRNO_DEFAULT_CONTACT_STRING_ERROR
                                   : DRMAA_ERRNO_INVALID_CONTACT_STRING,
                        (by_default ? "SLUICE_SERVER: " : "contact: ") + bad));
  }
  // 2. https:// controllers: the carrier the complete binary installs at start (once).
  static std::once_flag https_once;
  std::call_once(https_once, [] { client::EnableHttps(); });
  // 3. Who the credentials are: a wrong URL or credential fails here, not at the first job.
  client::ClientOptions probe_options = *options;
  probe_options.follow_for = kInitFollow;
  client::RestClient probe(probe_options);
  Result<json> whoami = probe.Get("/v1/whoami");
  if (!whoami) {
    Error error = ErrorFromStatus(whoami.error(), Call::kConnect);
    if (by_default && error.code() == DRMAA_ERRNO_DRMS_INIT_FAILED) {
      error = Error(DRMAA_ERRNO_DEFAULT_CONTACT_STRING_ERROR,
                    "SLUICE_SERVER=" + options->server + ": " + error.diagnosis());
    }
    return failed(error);
  }
  std::lock_guard lock(mu_);
  opening_ = false;
  active_ = true;
  ++generation_;
  options_ = *options;
  submitted_.clear();
  reaped_.clear();
  idle_.clear();
  return Error::None();
}

Error Session::Close() {
  std::vector<std::unique_ptr<client::RestClient>> idle;  // closed once the lock is released
  {
    std::lock_guard lock(mu_);
    if (!active_) return NoSession();
    active_ = false;
    ++generation_;
    idle.swap(idle_);
  }
  closed_.notify_all();
  return Error::None();
}

std::string Session::Contact() const {
  std::lock_guard lock(mu_);
  if (active_) return options_.server;
  const char* server = std::getenv("SLUICE_SERVER");
  return server != nullptr ? server : "";
}

bool Session::active() const {
  std::lock_guard lock(mu_);
  return active_;
}

Expected<Session::Lease> Session::Acquire() {
  std::lock_guard lock(mu_);
  if (!active_) return NoSession();
  if (idle_.empty()) {
    return Lease(*this, generation_, std::make_unique<client::RestClient>(options_));
  }
  std::unique_ptr<client::RestClient> client = std::move(idle_.back());
  idle_.pop_back();
  return Lease(*this, generation_, std::move(client));
}

void Session::Return(uint64_t generation, std::unique_ptr<client::RestClient> client) {
  std::lock_guard lock(mu_);
  if (active_ && generation == generation_ && idle_.size() < kIdleClients) {
    idle_.push_back(std::move(client));
  }
  // Else `client` (of a closed session, or one too many) closes as the call returns.
}

void Session::Record(uint64_t generation, const std::vector<std::string>& ids) {
  std::lock_guard lock(mu_);
  if (generation != generation_) return;  // submitted as the session closed: not this one's
  submitted_.insert(submitted_.end(), ids.begin(), ids.end());
}

std::vector<std::string> Session::Unreaped() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> ids;
  for (const std::string& id : submitted_) {
    if (!reaped_.contains(id)) ids.push_back(id);
  }
  return ids;
}

bool Session::IsReaped(const std::string& id) const {
  std::lock_guard lock(mu_);
  return reaped_.contains(id);
}

bool Session::Reap(uint64_t generation, const std::string& id) {
  std::lock_guard lock(mu_);
  if (generation != generation_) return false;
  return reaped_.insert(id).second;
}

Expected<int64_t> Session::Submit(Lease& lease, const json& body) {
  Result<json> reply = lease.rest().Post("/v1/jobs", body);
  if (!reply) return ErrorFromStatus(reply.error(), Call::kSubmit);
  if (!reply->is_object() || !reply->contains("id") || !(*reply)["id"].is_number_integer()) {
    return Error(DRMAA_ERRNO_INTERNAL_ERROR,
                 "the controller accepted the job but answered without its id: " + reply->dump());
  }
  return (*reply)["id"].get<int64_t>();
}

Expected<std::string> Session::RunJob(const TemplateValues& values) {
  Expected<Lease> lease = Acquire();
  if (!lease) return lease.error();
  Expected<json> body = BuildSubmission(values, LocalContext(), std::nullopt);
  if (!body) return body.error();
  Expected<int64_t> id = Submit(*lease, *body);
  if (!id) return id.error();
  const std::string job_id = std::to_string(*id);
  Record(lease->generation(), {job_id});
  return job_id;
}

Expected<std::vector<std::string>> Session::RunBulkJobs(const TemplateValues& values,
                                                        const BulkRange& range) {
  Expected<Lease> lease = Acquire();
  if (!lease) return lease.error();
  SLUICE_DRMAA_RETURN_IF_ERROR(CheckBulkRange(range));
  Expected<json> body = BuildSubmission(values, LocalContext(), range);
  if (!body) return body.error();
  Expected<int64_t> id = Submit(*lease, *body);
  if (!id) return id.error();
  std::vector<std::string> ids = BulkJobIds(*id, range);
  Record(lease->generation(), ids);
  return ids;
}

Error Session::ControlOne(client::RestClient& rest, const std::string& job_id, int action) {
  Expected<client::JobRef> ref = ParseJobId(job_id);
  if (!ref) return ref.error();
  const auto post = [&](const char* verb, Call call) {
    Result<json> job = rest.Post(ref->Path(verb), json::object());
    return job ? Error::None() : ErrorFromStatus(job.error(), call);
  };
  switch (action) {
    case DRMAA_CONTROL_SUSPEND:
    case DRMAA_CONTROL_RESUME: {
      const bool suspend = action == DRMAA_CONTROL_SUSPEND;
      Result<json> job = rest.Get(ref->Path());
      if (!job) return ErrorFromStatus(job.error(), Call::kJob);
      return Error(suspend ? DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE
                           : DRMAA_ERRNO_RESUME_INCONSISTENT_STATE,
                   "job " + job_id + ": Sluice cannot " + (suspend ? "suspend" : "resume") +
                       " a job: it has no suspension (DRMAA_CONTROL_HOLD holds a pending job, "
                       "DRMAA_CONTROL_TERMINATE ends one)");
    }
    case DRMAA_CONTROL_HOLD:
      return post("/hold", Call::kHold);
    case DRMAA_CONTROL_RELEASE:
      return post("/release", Call::kRelease);
    case DRMAA_CONTROL_TERMINATE:
      return post("/cancel", Call::kTerminate);
    default:
      return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                   "action " + std::to_string(action) +
                       ": expected DRMAA_CONTROL_SUSPEND (0), RESUME (1), HOLD (2), RELEASE (3) "
                       "or TERMINATE (4)");
  }
}

Error Session::Control(std::string_view job_id, int action) {
  if (action < DRMAA_CONTROL_SUSPEND || action > DRMAA_CONTROL_TERMINATE) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                 "action " + std::to_string(action) +
                     ": expected DRMAA_CONTROL_SUSPEND (0), RESUME (1), HOLD (2), RELEASE (3) "
                     "or TERMINATE (4)");
  }
  Expected<Lease> lease = Acquire();
  if (!lease) return lease.error();
  if (job_id != DRMAA_JOB_IDS_SESSION_ALL) {
    return ControlOne(lease->rest(), std::string(job_id), action);
  }
  // Every job of the session the action applies to: those it does not (a hold of a running
  // job, a terminate of an ended one) are passed over; the first other failure is returned
  // once every job was tried.
  Error first = Error::None();
  for (const std::string& id : Unreaped()) {
    Error error = ControlOne(lease->rest(), id, action);
    const bool passed_over =
        IsInconsistentState(error.code()) ||
        (action == DRMAA_CONTROL_TERMINATE && error.code() == DRMAA_ERRNO_INVALID_JOB);
    if (!error.ok() && !passed_over && first.ok()) first = error;
  }
  return first;
}

Error Session::Pause(uint64_t generation, const Deadline& deadline, milliseconds& backoff) {
  MutexLock lock(mu_);
  const Clock::time_point now = Clock::now();
  if (deadline.at && now >= *deadline.at) {
    return Error(DRMAA_ERRNO_EXIT_TIMEOUT, "timed out before the job ended");
  }
  Clock::time_point wake = now + backoff;
  if (deadline.at) wake = std::min(wake, *deadline.at);
  closed_.wait_until(lock, wake, [&] { return generation_ != generation; });
  if (generation_ != generation) return NoSession();
  backoff = std::min(backoff * 2, kLastPoll);
  return Error::None();
}

Error Session::Synchronize(const std::vector<std::string>& job_ids, long timeout, bool dispose) {
  Expected<Deadline> deadline = Deadline::After(timeout);
  if (!deadline) return deadline.error();
  std::vector<std::string> pending;
  for (const std::string& id : job_ids) {
    if (id == DRMAA_JOB_IDS_SESSION_ALL) {
      for (std::string& own : Unreaped()) pending.push_back(std::move(own));
      continue;
    }
    Expected<client::JobRef> ref = ParseJobId(id);
    if (!ref) return ref.error();
    if (IsReaped(id)) {
      return Error(DRMAA_ERRNO_INVALID_JOB, "job " + id + " was already reaped");
    }
    pending.push_back(id);
  }
  std::sort(pending.begin(), pending.end());
  pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
  const std::vector<std::string> all = pending;
  Expected<Lease> lease = Acquire();
  if (!lease) return lease.error();
  std::map<std::string, Clock::time_point> kill_pending;
  milliseconds backoff = kFirstPoll;
  while (true) {
    for (auto it = pending.begin(); it != pending.end();) {
      Expected<std::optional<json>> ended = EndedJob(lease->rest(), *it, kill_pending);
      if (!ended) return ended.error();
      it = ended->has_value() ? pending.erase(it) : it + 1;
    }
    if (pending.empty()) break;
    SLUICE_DRMAA_RETURN_IF_ERROR(Pause(lease->generation(), *deadline, backoff));
  }
  if (dispose) {
    for (const std::string& id : all) (void)Reap(lease->generation(), id);
  }
  return Error::None();
}

Expected<Session::Waited> Session::Wait(std::string_view job_id, long timeout,
                                        size_t id_capacity) {
  Expected<Deadline> deadline = Deadline::After(timeout);
  if (!deadline) return deadline.error();
  const bool any = job_id == DRMAA_JOB_IDS_SESSION_ANY;
  if (!any) {
    Expected<client::JobRef> ref = ParseJobId(job_id);
    if (!ref) return ref.error();
    if (IsReaped(std::string(job_id))) {
      return Error(DRMAA_ERRNO_INVALID_JOB,
                   "job " + std::string(job_id) + " was already reaped by drmaa_wait or "
                                                  "drmaa_synchronize");
    }
  }
  Expected<Lease> lease = Acquire();
  if (!lease) return lease.error();
  const uint64_t generation = lease->generation();
  std::map<std::string, Clock::time_point> kill_pending;
  milliseconds backoff = kFirstPoll;
  while (true) {
    const std::vector<std::string> ids = any ? Unreaped() : std::vector{std::string(job_id)};
    if (ids.empty()) {
      return Error(DRMAA_ERRNO_INVALID_JOB,
                   "no job submitted in this session is left to wait for");
    }
    for (const std::string& id : ids) {
      Expected<std::optional<json>> ended = EndedJob(lease->rest(), id, kill_pending);
      if (!ended) {
        // A job the controller no longer knows cannot end: it leaves the session's jobs.
        if (any && ended.error().code() == DRMAA_ERRNO_INVALID_JOB) (void)Reap(generation, id);
        return ended.error();
      }
      if (!ended->has_value()) continue;
      if (id.size() >= id_capacity) {
        return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                     "job_id_out: job " + id + " ended; its id needs a buffer of " +
                         std::to_string(id.size() + 1) + " bytes, got " +
                         std::to_string(id_capacity) + " (the job was not reaped)");
      }
      if (!Reap(generation, id)) {
        if (any) continue;  // another thread's wait took it
        return Error(DRMAA_ERRNO_INVALID_JOB, "job " + id + " was reaped by another thread");
      }
      const json& job = **ended;
      return Waited{.job_id = id,
                    .stat = EncodeStat(TerminationOf(job)),
                    .rusage = ResourceUsageOf(job)};
    }
    SLUICE_DRMAA_RETURN_IF_ERROR(Pause(generation, *deadline, backoff));
  }
}

Expected<int> Session::JobState(std::string_view job_id) {
  Expected<client::JobRef> ref = ParseJobId(job_id);
  if (!ref) return ref.error();
  Expected<Lease> lease = Acquire();
  if (!lease) return lease.error();
  Result<json> job = lease->rest().Get(ref->Path());
  if (!job) return ErrorFromStatus(job.error(), Call::kJob);
  return ProgramStateOf(*job);
}

}  // namespace sluice::drmaa
