#include "server/controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "base/array_ids.h"
#include "daemon/service_notifier.h"
#include "server/cycle_pacing.h"
#include "server/fixed_text_pool.h"
#include "server/job_identity.h"
#include "server/job_spec.h"
#include "server/memory_release.h"
#include "server/ordered_pipeline.h"
#include "server/views.h"
#include "wire/job_json.h"

namespace sluice::server {

using nlohmann::json;

namespace {

Status NotAdmin(const Caller& caller) {
  return Status(StatusCode::kPermissionDenied, caller.user + " is not an administrator");
}

}  // namespace

Controller::Controller(core::ClusterState state, ControllerDeps deps)
    : ctx_({.state = std::move(state),
            .store = deps.store,
            .options = std::move(deps.options),
            .clock = std::move(deps.clock),
            .log = std::move(deps.log)}),
      authenticator_(deps.auth, {.munge_socket = ctx_.options().munge_socket}),
      settings_(ctx_, std::move(deps.config), std::move(deps.auth)),
      book_(ctx_),
      agents_(ctx_, book_, settings_),
      runner_(ctx_, book_),
      requests_(ctx_, book_),
      changes_(ctx_, book_),
      arrays_(ctx_, book_, requests_),
      steps_(ctx_, book_, agents_, step_streams_, job_credentials_),
      keeper_(&ctx_.writes().store(),
              {.keep_seconds = ctx_.writes().store().PurgesHistory()
                                   ? ctx_.options().keep_history_seconds
                                   : -1,
               .interval_ms = ctx_.options().history_purge_interval_ms},
              [this] { return ctx_.NowMs(); }, ctx_.shared_log()),
      estimator_(ctx_, book_),
      reservations_(ctx_, book_),
      notifier_(deps.notifier) {
  agents_.set_peek_broker(&peeks_);
  agents_.set_steps(&step_streams_, &job_credentials_);
  book_.OnReleased([this](JobId id) { steps_.JobReleased(id); });
  // Specs once stored are read from the store, not kept (issue 45; SQLite).
  ctx_.writes().SetSpecsStored(
      [this](const std::vector<SpecWritten>& written) { book_.SpecsStored(written); });
  // Jobs in advance reservations end with their window (R-RSV-2) and only their users submit.
  book_.SetRunLimitSource(
      {.limit = [this](const JobInfo& job) { return reservations_.RunLimitOf(job); },
       .end_message = [this](const JobInfo& job) { return reservations_.WindowEndMessage(job); }});
  requests_.set_reservation_check(
      [this](const Caller& caller, const std::string& name, const std::string& where) {
        return reservations_.CheckSubmitter(caller, name, where);
      });
}

Controller::~Controller() {
  Stop();
  // Store callbacks refer to this controller: let them all run before it goes.
  ctx_.writes().store().Flush();
}

Result<std::unique_ptr<Controller>> Controller::Create(ControllerDeps deps) {
  Result<core::ClusterState> state = core::ClusterState::Create(deps.config);
  if (!state) return state.error();
  if (!deps.log) deps.log = spdlog::default_logger();
  const bool standby = deps.standby;
  std::unique_ptr<Controller> c(new Controller(std::move(*state), std::move(deps)));
  if (!standby) {
    // On a thread of its own that ends with it: the restored jobs' memory is then abandoned to
    // the threads that go on working (mimalloc reuses a thread's pages only when that thread
    // allocates), not kept by the caller, the main thread, which then only waits for signals.
    Status taken;
    std::exception_ptr thrown;
    std::thread([&] {
      try {
        taken = c->TakeOver();
      } catch (...) {
        thrown = std::current_exception();  // the caller's, as if it had restored itself
      }
    }).join();
    if (thrown) std::rethrow_exception(thrown);
    SLUICE_RETURN_IF_ERROR(taken);
  }
  return c;
}

Status Controller::Restore(store::Snapshot& snap) {
  std::lock_guard lock(ctx_.mu());
  settings_.set_config_version(snap.config_version);
  SLUICE_RETURN_IF_ERROR(settings_.RestoreHosts(snap.hosts));
  settings_.RestoreOverrides(snap.settings);
  reservations_.Restore(snap.reservations);  // before the jobs that run in them
  store::WriteBatch batch;
  if (auto next = snap.settings.find(std::string(JobBook::kNextIdSetting));
      next != snap.settings.end()) {
    book_.SkipIdsBelow(next->second);
  }
  RestoreCredentialKey(snap, batch);
  Result<JobBook::Restored> restored = RestoreJobs(batch);
  if (!restored) return restored.error();
  settings_.SettleDrainingHosts();  // their jobs are back on them: they drain on
  for (const std::string& host : restored->launch_hosts) agents_.Expect(host, start_ms_);
  for (const core::Host& host : ctx_.state().topology().hosts()) {
    SLUICE_RETURN_IF_ERROR(
        ctx_.ApplyLocked(core::HostChanged{host.spec.name, core::HostState::kUnavail}, ""));
  }
  settings_.RestoreReclaimDeadlines(snap.settings);
  ctx_.log().info("epoch {}: restored {} jobs ({} holding allocations), {} agent hosts",
                  ctx_.writes().epoch(), book_.jobs().size(), restored->holding,
                  settings_.agent_host_count());
  // Written even when empty: a store opened on a full disk learns here that it cannot write
  // yet (TakeOver waits for it), so this controller starts read-only instead of deciding.
  ctx_.writes().Write(std::move(batch));
  ctx_.cycle().MarkDirty();
  return Status::Ok();
}

// A chunk of rows at a time, read, parsed and restored at once (issue 45; job_book.h,
// "Restart"): the array elements' rows first, then every other, each in id order.
Result<JobBook::Restored> Controller::RestoreJobs(store::WriteBatch& batch) {
  constexpr size_t kRowsPerChunk = 1024;
  store::Store& store = ctx_.writes().store();
  const bool keeps_history = !store.PurgesHistory();
  const JobBook::RestoreFrame frame =
      book_.BeginRestore([this, keeps_history](const RestoringRow& row) {
        if (row.ended && keeps_history) history_.insert({row.end_time, row.id});
        if (!row.idempotency.is_null()) {
          idempotency_.NoteRestored(row.id, row.submit_time, row.user, row.idempotency);
        }
      });
  using Rows = std::vector<store::StoredJob>;
  using Prepared = std::vector<RestoringRow>;
  const OrderedPipeline<Rows, Prepared>::Stages stages{
      .read = [&store](const OrderedPipeline<Rows, Prepared>::Emit& emit) -> Status {
        SLUICE_RETURN_IF_ERROR(store.ReadJobs(kMaxArrayJobId + 1, std::numeric_limits<JobId>::max(),
                                              kRowsPerChunk, emit));
        return store.ReadJobs(0, kMaxArrayJobId, kRowsPerChunk, emit);
      },
      .prepare =
          [&frame](Rows&& rows) {
            Prepared prepared;
            prepared.reserve(rows.size());
            for (store::StoredJob& row : rows) {
              prepared.push_back(JobBook::PrepareRestore(std::move(row), frame));
            }
            return prepared;
          },
      .apply =
          [this](Prepared&& rows) {
            for (RestoringRow& row : rows) book_.RestorePrepared(std::move(row));
          }};
  // The calling thread prepares too while it has nothing to apply: one worker per other core.
  const int workers = std::clamp(static_cast<int>(std::thread::hardware_concurrency()) - 1, 1, 3);
  SLUICE_RETURN_IF_ERROR(
      (OrderedPipeline<Rows, Prepared>::Run(stages, workers, /*max_in_flight=*/4 * (workers + 2))));
  JobBook::Restored restored = book_.EndRestore(batch);
  idempotency_.EndRestore();  // after EndRestore: the elements' rows are noted there
  return restored;
}

Result<Caller> Controller::Authenticate(const std::string& token) {
  if (std::string_view(token).starts_with(UiSessions::kPrefix)) {  // a dashboard session
    Result<std::string> user = ui_sessions_.Verify(token, ctx_.Now());
    if (user) return Caller{.user = *user, .admin = authenticator_.IsAdmin(*user)};
    // Not a session: a configured token may begin so too.
    if (Result<Caller> configured = authenticator_.AuthenticateToken(token)) return configured;
    return user.error();
  }
  return authenticator_.AuthenticateToken(token);
}

Result<Caller> Controller::AuthenticateRequest(const std::string& authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (std::string_view(authorization).starts_with(kBearer)) {
    return Authenticate(authorization.substr(kBearer.size()));
  }
  return authenticator_.Authenticate(authorization);
}

Answer Controller::OpenUiSession(const Caller& caller, const json& body) {
  int64_t ttl = UiSessions::kDefaultTtlSeconds;
  if (body.is_object() && body.contains("ttl_seconds")) {
    const json& given = body["ttl_seconds"];
    if (!given.is_number_integer() || given.get<int64_t>() < 60 ||
        given.get<int64_t>() > UiSessions::kMaxTtlSeconds) {
      return InvalidArgument("ttl_seconds: expected an integer from 60 to " +
                             std::to_string(UiSessions::kMaxTtlSeconds));
    }
    ttl = given.get<int64_t>();
  }
  const int64_t expires = ctx_.Now() + ttl;
  Result<std::string> token = ui_sessions_.Issue(caller.user, expires);
  if (!token) return token.error();
  ctx_.log().info("dashboard session opened for {} until {}", caller.user, expires);
  return json{{"token", *token}, {"user", caller.user}, {"expires", expires}};
}

void Controller::RestoreCredentialKey(const store::Snapshot& snap, store::WriteBatch& batch) {
  std::vector<uint64_t> words;
  for (int word = 0; word < JobCredentials::kKeyWords; ++word) {
    auto it = snap.settings.find(JobCredentials::SettingKey(word));
    if (it == snap.settings.end()) break;
    words.push_back(static_cast<uint64_t>(it->second));
  }
  if (words.size() != JobCredentials::kKeyWords) {  // the first start on this store
    std::random_device random;
    words.clear();
    for (int word = 0; word < JobCredentials::kKeyWords; ++word) {
      words.push_back((static_cast<uint64_t>(random()) << 32) ^ random());
      batch.settings[JobCredentials::SettingKey(word)] = static_cast<int64_t>(words.back());
    }
  }
  std::string key;
  for (uint64_t bits : words) {
    for (int b = 0; b < 8; ++b) key += static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  ui_sessions_.SetKey(key);
  job_credentials_.SetKey(std::move(key));
}

// --- Users --------------------------------------------------------------------------------------

Answer Controller::Submit(const Caller& caller, const json& body,
                         const std::string& idempotency_key) {
  Result<json> spec = ParseSubmission(body, "job");
  if (!spec) return spec.error();
  std::vector<std::shared_ptr<const std::string>> fixed = {SharedFixedText(*spec)};
  std::vector<json> specs;
  specs.push_back(std::move(*spec));
  if (!idempotency_key.empty()) {
    if (Status s = IdempotencyKeys::CheckKey(idempotency_key); !s.ok()) return s;
  }
  const std::string digest = idempotency_key.empty() ? "" : IdempotencyKeys::Digest(specs, false);
  MutexLock lock(ctx_.mu());
  Result<Caller> runs_as = WithJobAccount(settings_.auth(), caller);  // R-SEC-1
  if (!runs_as) return runs_as.error();
  return SubmitLocked(lock, *runs_as, idempotency_key, digest, std::move(specs), std::move(fixed),
                      false);
}

Answer Controller::SubmitBatch(const Caller& caller, const json& body,
                              const std::string& idempotency_key) {
  Result<std::vector<json>> specs = JobRequests::ParseBatch(body);
  if (!specs) return specs.error();
  std::vector<std::shared_ptr<const std::string>> fixed;
  fixed.reserve(specs->size());
  for (const json& spec : *specs) fixed.push_back(SharedFixedText(spec));
  if (!idempotency_key.empty()) {
    if (Status s = IdempotencyKeys::CheckKey(idempotency_key); !s.ok()) return s;
  }
  const std::string digest = idempotency_key.empty() ? "" : IdempotencyKeys::Digest(*specs, true);
  MutexLock lock(ctx_.mu());
  Result<Caller> runs_as = WithJobAccount(settings_.auth(), caller);  // R-SEC-1
  if (!runs_as) return runs_as.error();
  return SubmitLocked(lock, *runs_as, idempotency_key, digest, std::move(*specs), std::move(fixed),
                      true);
}

Answer Controller::GetJob(JobId id) {
  MutexLock lock(ctx_.mu());
  ctx_.writes().AwaitWrites(lock, kReadWaitsForWrites);
  Result<json> job = IsArrayElement(id) ? arrays_.Get(id) : requests_.Get(id);
  if (!job) return job.error();
  // A closed host's reason beside its verdict (R-OPS-4: "closed by its health check: ...").
  AddClosedReasons(*job,
                   [this](const std::string& host) { return ClosedReason(agents_.View(host)); });
  return std::move(*job);
}

Answer Controller::Cancel(const Caller& caller, JobId id) {
  MutexLock lock(ctx_.mu());
  if (arrays_.Handles(id)) {  // an array (every element) or one element (R-UX-3)
    const auto [first, last] = IsArrayElement(id) ? std::pair(ArrayIndexOf(id), ArrayIndexOf(id))
                                                  : std::pair(0, kMaxArrayIndex);
    return arrays_.Act(lock, caller, ArrayIdOf(id), first, last, ArrayAction::kCancel);
  }
  return requests_.Cancel(lock, caller, id);
}

Answer Controller::Hold(const Caller& caller, JobId id, bool held) {
  MutexLock lock(ctx_.mu());
  if (arrays_.Handles(id)) {
    const auto [first, last] = IsArrayElement(id) ? std::pair(ArrayIndexOf(id), ArrayIndexOf(id))
                                                  : std::pair(0, kMaxArrayIndex);
    return arrays_.Act(lock, caller, ArrayIdOf(id), first, last,
                               held ? ArrayAction::kHold : ArrayAction::kRelease);
  }
  return requests_.Hold(lock, caller, id, held);
}

Answer Controller::ActOnElements(const Caller& caller, JobId id, int32_t first, int32_t last,
                                ArrayAction action) {
  MutexLock lock(ctx_.mu());
  return arrays_.Act(lock, caller, id, first, last, action);
}

Answer Controller::Peek(const Caller& caller, JobId id, int64_t lines,
                       std::optional<int64_t> offset) {
  MutexLock lock(ctx_.mu());
  return peeks_.Peek(lock, ctx_, book_, caller, id, lines, offset);
}

Answer Controller::Hosts() {
  std::lock_guard lock(ctx_.mu());
  json out = json::array();
  for (const core::Host& host : ctx_.state().topology().hosts()) {
    if (host.membership == core::HostMembership::kGone) continue;  // out of the configuration
    out.push_back(HostJson(host, ctx_.state().topology(), agents_.View(host.spec.name)));
    out.back()["reservations"] = reservations_.OnHost(host.spec.name);  // R-RSV-1
  }
  return out;
}

Answer Controller::Queues() {
  std::lock_guard lock(ctx_.mu());
  json out = json::array();
  const JobCounts counts = book_.CountsWithElements();
  for (const core::Queue& queue : ctx_.state().topology().queues()) {
    out.push_back(QueueJson(queue, counts));
  }
  return out;
}

Answer Controller::Limits() {
  std::lock_guard lock(ctx_.mu());
  return LimitsJson(ctx_.state());
}

// --- Administrators -----------------------------------------------------------------------------

Answer Controller::AnswerAfterCommit(MutexLock& lock, json answer,
                                    store::WriteBatch batch) {
  // Answered once it is stored: a restart keeps it.
  if (Status s = ctx_.writes().WriteAndWait(lock, std::move(batch)); !s.ok()) return s;
  return answer;
}

Answer Controller::QueueAction(const Caller& caller, const std::string& queue,
                              const std::string& action) {
  if (!caller.admin) return NotAdmin(caller);
  MutexLock lock(ctx_.mu());
  auto index = ctx_.state().topology().FindQueue(queue);
  if (!index) return NotFound("no queue named '" + queue + "'");
  Result<store::WriteBatch> batch = settings_.SetQueue(queue, action, agents_.LiveFn());
  if (!batch) return batch.error();
  ctx_.log().info("queue {}: {} by {}", queue, action, caller.user);
  ctx_.cycle().MarkDirty();
  return AnswerAfterCommit(
      lock, QueueJson(ctx_.state().topology().queues()[*index], book_.CountsWithElements()),
      std::move(*batch));
}

Answer Controller::HostAction(const Caller& caller, const std::string& host,
                             const std::string& action) {
  if (!caller.admin) return NotAdmin(caller);
  MutexLock lock(ctx_.mu());
  auto index = ctx_.state().topology().FindHost(host);
  if (!index || ctx_.state().topology().hosts()[*index].membership == core::HostMembership::kGone) {
    return NotFound("no host named '" + host + "'");
  }
  Result<store::WriteBatch> batch = settings_.SetHost(host, action);
  if (!batch) return batch.error();
  ctx_.log().info("host {}: {} by {}", host, action, caller.user);
  if (action == "open") agents_.HostOpened(host);
  agents_.SyncHostState(host);
  const core::Topology& topology = ctx_.state().topology();
  json answer = HostJson(topology.hosts()[*index], topology, agents_.View(host));
  return AnswerAfterCommit(lock, std::move(answer), std::move(*batch));
}

// --- Advance reservations (issue 42) -------------------------------------------------------------

Answer Controller::CreateReservation(const Caller& caller, const json& body) {
  MutexLock lock(ctx_.mu());
  return reservations_.Create(lock, caller, body, settings_.auth().user_reservations);
}

Answer Controller::ModifyReservation(const Caller& caller, const std::string& name,
                                     const json& body) {
  MutexLock lock(ctx_.mu());
  return reservations_.Modify(lock, caller, name, body, settings_.auth().user_reservations);
}

Answer Controller::DeleteReservation(const Caller& caller, const std::string& name) {
  MutexLock lock(ctx_.mu());
  return reservations_.Delete(lock, caller, name, settings_.auth().user_reservations);
}

Answer Controller::ListReservations() {
  std::lock_guard lock(ctx_.mu());
  return reservations_.List();
}

Answer Controller::GetReservation(const std::string& name) {
  std::lock_guard lock(ctx_.mu());
  return reservations_.Get(name);
}

Answer Controller::PreviewReservation(const Caller& caller, const json& body) {
  MutexLock lock(ctx_.mu());
  return reservations_.Preview(lock, caller, body, settings_.auth().user_reservations);
}

Answer Controller::Reconfigure() {
  config::AuthConfig auth;
  Result<core::ClusterConfig> config = config::LoadClusterConfig(ctx_.options().config_path, &auth);
  if (!config) {
    ctx_.log().error("reconfigure refused: {}", config.error().message());
    return InvalidArgument(config.error().message());
  }
  {
    std::lock_guard lock(ctx_.mu());
    if (!taken_over_) {
      // A standby (R-OPS-3): the file is checked now and put in force when this controller
      // leads, after the restore (a standby holds no state a reload could change now).
      reload_when_leading_ = PendingReload{std::move(*config), std::move(auth)};
      ctx_.log().info("reconfigure: the file is valid; this standby puts it in force when it leads");
      return json{{"applies", "when this controller leads"}};
    }
  }
  return ApplyReload(std::move(*config), std::move(auth));
}

Answer Controller::ApplyReload(core::ClusterConfig config, config::AuthConfig auth) {
  Answer reply = Reconfigure(std::move(config));
  if (reply.ok()) {
    authenticator_.Configure(auth);
    std::lock_guard lock(ctx_.mu());
    // A host whose failing health check is gone from the file reopens (R-OPS-4).
    for (const std::string& host : settings_.SetAuth(std::move(auth))) {
      ctx_.log().info("host {}: no health check any more; its health close is lifted", host);
      agents_.SyncHostState(host);
    }
  }
  return reply;
}

Answer Controller::Reconfigure(core::ClusterConfig config) {
  MutexLock lock(ctx_.mu());
  if (!ctx_.writes().Writable()) {  // a standby (SIGHUP) or no store quorum: it could not be stored
    return Status(StatusCode::kUnavailable, "not leading: the store cannot be written");
  }
  Result<store::WriteBatch> batch = settings_.Replace(std::move(config), agents_.LiveFn());
  if (!batch) return batch.error();
  ctx_.cycle().MarkDirty();
  return AnswerAfterCommit(lock, {{"config_version", settings_.config_version()}},
                           std::move(*batch));
}

// --- Agents -------------------------------------------------------------------------------------

Answer Controller::Register(const json& body) {
  Result<Registration> reg = wire::DecodeRegister(body);
  if (!reg) return reg.error();
  MutexLock lock(ctx_.mu());
  return agents_.Register(*reg, lock);
}

Answer Controller::Heartbeat(const std::string& agent, const json& body) {
  Result<HeartbeatReport> report = wire::DecodeHeartbeat(body);
  if (!report) return report.error();
  MutexLock lock(ctx_.mu());
  return agents_.Heartbeat(agent, *report, lock);
}

Answer Controller::HeartbeatBatch(const json& body) {
  Result<wire::BatchHeartbeatRequest> request = wire::DecodeBatchHeartbeat(body);
  if (!request) return request.error();
  MutexLock lock(ctx_.mu());
  return agents_.HeartbeatBatch(*request, lock);
}

// --- Scheduling ---------------------------------------------------------------------------------

void Controller::TurnLocked(bool due) {
  if (!ctx_.writes().Writable()) return ResyncLocked();  // R-HA-4: nothing moves without the store
  agents_.CheckLeases();
  PurgeHistoryLocked();
  book_.ForgetEnded();
  steps_.Expire();
  reservations_.RefreshIfDue();  // recurring reservations' next windows
  if (ctx_.cycle().TakeDirty() || due || runner_.WakeDue(ctx_.Now())) {
    if (!agents_.Reconciling()) {
      NoteCycleLocked();
      runner_.Run();
    }
  }
}

void Controller::Tick() {
  std::lock_guard lock(ctx_.mu());
  TurnLocked(false);
}

void Controller::Start() {
  keeper_.Start();
  estimator_.Start();
  thread_ = std::thread([this] { SchedulingLoop(); });
}

void Controller::SchedulingLoop() {
  constexpr std::chrono::milliseconds kDebounce{2};
  const std::chrono::milliseconds gap{ctx_.options().event_cycle_gap_ms};
  // Leases and timers are checked every 200 ms; the watchdog may need a turn sooner.
  const std::chrono::milliseconds every = std::min<std::chrono::milliseconds>(
      std::chrono::milliseconds(200),
      notifier_ ? notifier_->KeepAliveEvery() : std::chrono::milliseconds(200));
  SteadyTime last_cycle_end{};
  MutexLock lock(ctx_.mu());
  while (true) {
    const SteadyTime timers = std::chrono::steady_clock::now() + every;
    if (!ctx_.cycle().WaitForTurn(lock, timers, last_cycle_end, kDebounce, gap)) break;
    if (faults_.SchedulingHangs()) {
      ctx_.log().warn("fault injection: the scheduling thread hangs (SLUICE_SERVER_FAULT)");
      ctx_.cycle().WaitUntilStopped(lock);
      break;
    }
    if (notifier_ != nullptr) notifier_->KeepAlive();
    const int64_t cycles = runner_.timing().count;
    TurnLocked(runner_.ExplainDue(ctx_.NowMs()));
    last_cycle_end = std::chrono::steady_clock::now();
    // A turn without a cycle after large ones: their freed buffers go back to the system.
    if (runner_.timing().count == cycles && ReleaseOwed()) {
      lock.unlock();
      ReleaseFreedMemory();
      lock.lock();
    }
  }
}

void Controller::Stop() {
  {
    std::lock_guard lock(ctx_.mu());
    ctx_.Stop();
  }
  step_streams_.WakeAll();
  if (thread_.joinable()) thread_.join();
  keeper_.Stop();
  estimator_.Stop();
}

void Controller::FlushStore() { ctx_.writes().store().Flush(); }

// --- Observation --------------------------------------------------------------------------------

int Controller::Subscribe(std::function<void(const JobEvent&)> listener) {
  std::lock_guard lock(ctx_.mu());
  return book_.Subscribe(std::move(listener));
}

void Controller::Unsubscribe(int id) {
  std::lock_guard lock(ctx_.mu());
  book_.Unsubscribe(id);
}

void Controller::RecordDecisions(bool on) {
  std::lock_guard lock(ctx_.mu());
  runner_.Record(on);
}

std::vector<std::string> Controller::RecordedDecisions() {
  std::lock_guard lock(ctx_.mu());
  return runner_.recorded();
}

bool Controller::Reconciling() {
  std::lock_guard lock(ctx_.mu());
  return agents_.Reconciling();
}

}  // namespace sluice::server
