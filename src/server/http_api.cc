#include "server/http_api.h"

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <tuple>

#include "server/agent_credentials.h"
#include "server/connection_guard.h"
#include "server/dashboard_routes.h"
#include "server/job_arrays.h"
#include "server/job_listing.h"
#include "server/memory_release.h"
#include "server/peek_broker.h"
#include "server/request_guard.h"
#include "server/sse_queue.h"
#include "server/text_parsers.h"
#include "wire/protocol_version.h"

namespace sluice::server {

using nlohmann::json;

namespace {

// A batch of at least this many jobs is followed by ReleaseFreedMemory (its parsed body is
// ~2 KB a job of short-lived trees).
constexpr size_t kReleaseAfterJobs = 1000;

// How long an SSE reader lets events gather after the first before it writes them (sse_queue.h).
constexpr std::chrono::milliseconds kSseGather{10};

void Send(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  res.set_content(reply.text.empty() ? SafeDump(reply.body) : reply.text, "application/json");
}

// A failure: its HTTP status comes from the code (HttpStatusOf, http_reply.h).
void SendError(httplib::Response& res, const Status& status) { Send(res, ErrorReply(status)); }

// A listing the controller wrote as JSON text, or why not.
void SendText(httplib::Response& res, Result<std::string> text) { Send(res, Reply(std::move(text))); }

// GET /v1/jobs written as it goes (job_listing.h, issue 45): a bad query is answered whole,
// before any byte of the listing; then one HTTP chunk per chunk of jobs, each taking the
// controller's lock for its own copy only. A client that goes away ends the listing.
void StreamJobs(Controller& c, const std::map<std::string, std::string>& query,
                httplib::Response& res) {
  Result<std::unique_ptr<JobListing>> opened = c.OpenJobListing(query);
  if (!opened) return SendError(res, opened.error());
  std::shared_ptr<JobListing> listing = std::move(*opened);  // the provider must be copyable
  res.set_chunked_content_provider(
      "application/json", [&c, listing](size_t, httplib::DataSink& sink) {
        std::string text;
        c.NextJobChunk(*listing, text);
        if (!text.empty() && !sink.write(text.data(), text.size())) return false;
        if (listing->done()) sink.done();
        return true;
      });
}

std::string BearerToken(const httplib::Request& req) {
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kPrefix = "Bearer ";
  if (header.size() <= kPrefix.size() || header.compare(0, kPrefix.size(), kPrefix) != 0) return "";
  return header.substr(kPrefix.size());
}

// Parses a JSON body (size, UTF-8, nesting and numbers checked first, request_guard.h); on
// failure fills `res` with a 4xx naming the problem.
bool ParseBody(const httplib::Request& req, httplib::Response& res, size_t limit, json& out) {
  Result<json> parsed = ParseJsonBody(req.body, limit);
  if (!parsed) {
    SendError(res, parsed.error());
    return false;
  }
  out = std::move(*parsed);
  return true;
}

// The job id of a route's first match; on failure fills `res` with a 400.
bool JobIdOf(const httplib::Request& req, httplib::Response& res, JobId& id) {
  Result<int64_t> parsed = ParseJobId(req.matches[1].str());
  if (!parsed) SendError(res, parsed.error());
  if (parsed) id = *parsed;
  return static_cast<bool>(parsed);
}

// `?index=I` on a job route: `id` becomes element I of array `id` (R-UX-3).
bool ElementIdOf(const httplib::Request& req, httplib::Response& res, JobId& id) {
  if (!req.has_param("index")) return true;
  Result<std::pair<int32_t, int32_t>> range = ParseIndexRange(req.get_param_value("index"));
  if (range && range->first != range->second) {
    range = InvalidArgument("index: expected one index here, got a range");
  }
  if (range && id > kMaxArrayJobId) {
    range = InvalidArgument("index: no array has id " + std::to_string(id));
  }
  if (!range) {
    SendError(res, range.error());
    return false;
  }
  id = ArrayElementId(id, range->first);
  return true;
}

// Authenticates a user route's caller (the agent token is refused); fills `res` on refusal.
bool AuthenticateUser(Controller& c, const httplib::Request& req, httplib::Response& res,
                      Caller& caller) {
  ConnectionGuard::MarkHandling();
  Status refused =
      AuthorizeRoute(c.AuthenticateRequest(req.get_header_value("Authorization")), false, caller);
  if (!refused.ok()) SendError(res, refused);
  return refused.ok();
}

// A user's request about job ID (the path's first number) with a JSON body; fills `res` and
// returns false on refusal.
bool UserJobRequest(Controller& c, const httplib::Request& req, httplib::Response& res,
                    Caller& caller, JobId& id, json& body) {
  return AuthenticateUser(c, req, res, caller) && JobIdOf(req, res, id) &&
         ParseBody(req, res, kMaxBodyBytes, body);
}

// Authenticates an agent route's caller (the agent token only); fills `res` on refusal.
bool AuthenticateAgent(Controller& c, const httplib::Request& req, httplib::Response& res,
                       Caller& caller) {
  ConnectionGuard::MarkHandling();
  Status refused =
      AuthorizeRoute(c.AuthenticateRequest(req.get_header_value("Authorization")), true, caller);
  if (!refused.ok()) SendError(res, refused);
  return refused.ok();
}

// Whether the agent's credential covers `host` (agent_credentials.h); fills `res` if not.
bool AgentServes(const Caller& caller, const std::string& host, httplib::Response& res) {
  Status refused = CheckAgentHost(caller, host);
  if (!refused.ok()) SendError(res, refused);
  return refused.ok();
}

// Whether the credential covers every host a batched heartbeat names (`hosts[].name` and
// `poll[]`); what is not a name is left to the batch's decoder to refuse.
bool AgentServesBatch(const Caller& caller, const json& body, httplib::Response& res) {
  auto serves = [&](const json& name) {
    return !name.is_string() || AgentServes(caller, name.get<std::string>(), res);
  };
  if (!body.is_object()) return true;
  if (auto hosts = body.find("hosts"); hosts != body.end() && hosts->is_array()) {
    for (const json& part : *hosts) {
      if (part.is_object() && part.contains("name") && !serves(part["name"])) return false;
    }
  }
  if (auto poll = body.find("poll"); poll != body.end() && poll->is_array()) {
    for (const json& name : *poll) {
      if (!serves(name)) return false;
    }
  }
  return true;
}

// The limits checked before a route runs (request_guard.h), and the replies to what fails
// before or outside a route. Workers, keep-alive and timeouts: ConnectionGuard.
void InstallServerSettings(httplib::Server& server, Controller& c, HttpApi::Front front) {
  server.set_payload_max_length(kMaxBatchBodyBytes);
  // Every reply states the controller's protocol version (R-OPS-5), refusals included.
  server.set_default_headers({{wire::kProtocolHeader, wire::ToString(wire::kProtocolVersion)}});
  InstallRequestGuard(
      server, RequestGuardOptions{.max_body_bytes = kMaxBodyBytes,
                                  .max_batch_body_bytes = kMaxBatchBodyBytes,
                                  .authenticate = [&c](const httplib::Request& req) -> Status {
                                    const std::string scheme =
                                        req.get_header_value("Authorization");
                                    // Other schemes (MUNGE credentials are single-use) are checked
                                    // by the route.
                                    if (!scheme.empty() && scheme.rfind("Bearer ", 0) != 0)
                                      return Status::Ok();
                                    Result<Caller> caller = c.Authenticate(BearerToken(req));
                                    return caller ? Status::Ok() : caller.error();
                                  },
                                  .front = std::move(front)});
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      // cpp-httplib also caps form-encoded bodies at 8 KiB: say which applies.
      SendError(res, Status(StatusCode::kResourceExhausted,
                            "body exceeds the limit of " + std::to_string(kMaxBatchBodyBytes) +
                                " bytes (or 8192 bytes without Content-Type: application/json)"));
    } else if (res.status == 404) {
      SendError(res, NotFound("no route " + req.method + " " + req.path));
    } else if (res.status == 400) {
      // cpp-httplib refuses a POST without Content-Length before any route runs.
      SendError(res, InvalidArgument("malformed HTTP request " + req.method + " " + req.path +
                                     " (a POST needs a body with Content-Length: send {} with "
                                     "Content-Type: application/json)"));
    } else {
      Send(res, Reply::Error(res.status, "request failed"));  // httplib's own status
    }
  });
  server.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = std::string("internal error: ") + e.what();
        } catch (...) {
        }
        SendError(res, Internal(what));
      });
}

// The caller of a step route of job `id`: a user, or the job's own credential
// (`Authorization: Job <credential>`, job_credential.h); fills `res` on refusal.
bool AuthenticateStepCaller(Controller& c, const httplib::Request& req, httplib::Response& res,
                            JobId id, Caller& caller) {
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kJob = "Job ";
  if (!header.starts_with(kJob)) return AuthenticateUser(c, req, res, caller);
  ConnectionGuard::MarkHandling();
  Result<Caller> found = c.CallerOfJobCredential(header.substr(kJob.size()), id);
  if (!found) {
    SendError(res, found.error());
    return false;
  }
  caller = *found;
  return true;
}

// `after` (>= 0, default 0) and `wait_ms` (0..10000, default 5000) of a stream read.
bool StreamQuery(const httplib::Request& req, httplib::Response& res, int64_t& after,
                 int64_t& wait_ms) {
  after = 0;
  wait_ms = 5000;
  for (auto [key, out, max] : {std::tuple{"after", &after, INT64_MAX},
                               std::tuple{"wait_ms", &wait_ms, int64_t{10'000}}}) {
    if (!req.has_param(key)) continue;
    Result<int64_t> value = QueryInteger(key, req.get_param_value(key), 0, max);
    if (!value) {
      SendError(res, value.error());
      return false;
    }
    *out = *value;
  }
  return true;
}

// The step number of a route's second match.
bool StepOf(const httplib::Request& req, httplib::Response& res, int64_t& step) {
  std::optional<int64_t> parsed = ParseInteger(req.matches[2].str());
  if (!parsed || *parsed < 0) {  // 0: an interactive job's own streams
    SendError(res, InvalidArgument("step: expected a number >= 0, got `" + req.matches[2].str() + "`"));
    return false;
  }
  step = *parsed;
  return true;
}

}  // namespace

void HttpApi::InstallStepRoutes(httplib::Server& server) {
  Controller& c = controller_;
  server.Post(R"(/v1/jobs/(-?\d+)/steps)", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    JobId id = 0;
    json body;
    if (!JobIdOf(req, res, id) || !AuthenticateStepCaller(c, req, res, id, caller) ||
        !ParseBody(req, res, kMaxBodyBytes, body)) {
      return;
    }
    Send(res, ReplyOf(c.OpenStep(caller, id, body), 201));
  });
  server.Get(R"(/v1/jobs/(-?\d+)/steps/(\d+)/output)",
             [&c](const httplib::Request& req, httplib::Response& res) {
               Caller caller;
               JobId id = 0;
               int64_t step = 0, after = 0, wait_ms = 0;
               if (!JobIdOf(req, res, id) || !StepOf(req, res, step) ||
                   !StreamQuery(req, res, after, wait_ms) ||
                   !AuthenticateStepCaller(c, req, res, id, caller)) {
                 return;
               }
               Send(res, c.StepOutput(caller, id, step, after, wait_ms));
             });
  server.Post(R"(/v1/jobs/(-?\d+)/steps/(\d+)/input)",
              [&c](const httplib::Request& req, httplib::Response& res) {
                Caller caller;
                JobId id = 0;
                int64_t step = 0;
                json body;
                if (!JobIdOf(req, res, id) || !StepOf(req, res, step) ||
                    !AuthenticateStepCaller(c, req, res, id, caller) ||
                    !ParseBody(req, res, kMaxBodyBytes, body)) {
                  return;
                }
                Send(res, c.StepInput(caller, id, step, body));
              });
  // The agent's ends: the host is the route's; its credential must serve it.
  server.Get(R"(/v1/agents/([^/]+)/steps/(\d+)/(\d+)/input)",
             [&c](const httplib::Request& req, httplib::Response& res) {
               Caller caller;
               const std::string host = req.matches[1];
               std::optional<int64_t> id = ParseInteger(req.matches[2].str());
               std::optional<int64_t> step = ParseInteger(req.matches[3].str());
               int64_t after = 0, wait_ms = 0;
               if (!AuthenticateAgent(c, req, res, caller) || !AgentServes(caller, host, res) ||
                   !StreamQuery(req, res, after, wait_ms)) {
                 return;
               }
               if (!id || !step) return SendError(res, InvalidArgument("bad job or step number"));
               Send(res, c.AgentStepInput(host, *id, *step, after, wait_ms));
             });
  server.Post(R"(/v1/agents/([^/]+)/steps/(\d+)/(\d+)/output)",
              [&c](const httplib::Request& req, httplib::Response& res) {
                Caller caller;
                const std::string host = req.matches[1];
                std::optional<int64_t> id = ParseInteger(req.matches[2].str());
                std::optional<int64_t> step = ParseInteger(req.matches[3].str());
                json body;
                if (!AuthenticateAgent(c, req, res, caller) || !AgentServes(caller, host, res) ||
                    !ParseBody(req, res, kMaxBodyBytes, body)) {
                  return;
                }
                if (!id || !step) return SendError(res, InvalidArgument("bad job or step number"));
                Send(res, c.AgentStepOutput(host, *id, *step, body));
              });
}

void HttpApi::Install(httplib::Server& server) {
  InstallServerSettings(server, controller_, front_);
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server.Get("/metrics", [&c = controller_](const httplib::Request&, httplib::Response& res) {
    res.set_content(c.Metrics(), "text/plain; version=0.0.4");
  });
  InstallJobRoutes(server);
  InstallJobActionRoutes(server);
  InstallClusterRoutes(server);
  InstallReservationRoutes(server);
  InstallAgentRoutes(server);
  InstallStepRoutes(server);
  InstallHistoryRoutes(server);
  InstallEvents(server);
}

void HttpApi::InstallJobRoutes(httplib::Server& server) {
  Controller& c = controller_;
  server.Post("/v1/jobs", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    json body;
    if (!AuthenticateUser(c, req, res, caller) || !ParseBody(req, res, kMaxBodyBytes, body)) return;
    Send(res, ReplyOf(c.Submit(caller, body, req.get_header_value("Idempotency-Key")), 201));
  });
  server.Post("/v1/jobs/batch", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    json body;
    if (!AuthenticateUser(c, req, res, caller) || !ParseBody(req, res, kMaxBatchBodyBytes, body)) {
      return;
    }
    Send(res, ReplyOf(c.SubmitBatch(caller, body, req.get_header_value("Idempotency-Key")), 201));
    // A large batch's parsed bodies are freed now: their pages go back to the system rather
    // than stay resident as the heap's free memory (issue 45).
    const bool large = body.is_object() && body.contains("jobs") && body["jobs"].is_array() &&
                       body["jobs"].size() >= kReleaseAfterJobs;
    body = json();
    if (large) ReleaseFreedMemory();
  });
  server.Get("/v1/jobs", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!AuthenticateUser(c, req, res, caller)) return;
    std::map<std::string, std::string> query;
    for (const auto& [k, v] : req.params) query[k] = v;
    if (query["user"] == "@me") query["user"] = caller.user;  // the caller's own (squeue --me)
    if (query["user"].empty()) query.erase("user");
    if (AnswerJobPage(c, query, res)) return;  // offset, sort, search... (job_pages.h)
    StreamJobs(c, query, res);
  });
  server.Get(R"(/v1/jobs/(-?\d+))", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    JobId id = 0;
    if (!AuthenticateUser(c, req, res, caller) || !JobIdOf(req, res, id)) return;
    JobId element = id;
    if (!ElementIdOf(req, res, element)) return;  // ?index=I (R-UX-3)
    Send(res, c.GetJob(element));
  });
  server.Get(R"(/v1/jobs/(-?\d+)/peek)", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    JobId id = 0;
    if (!AuthenticateUser(c, req, res, caller) || !JobIdOf(req, res, id)) return;
    if (!ElementIdOf(req, res, id)) return;  // ?index=I: one element of an array (R-UX-3)
    Result<PeekQuery> query = ParsePeekQuery(req.params);
    if (!query) return SendError(res, query.error());
    Send(res, c.Peek(caller, id, query->lines, query->offset));
  });
}

// POST /v1/jobs/ID/ACTION: cancel, hold, release and signal (R-SRV-5: the owner or an admin).
void HttpApi::InstallJobActionRoutes(httplib::Server& server) {
  Controller& c = controller_;
  server.Post(R"(/v1/jobs/(-?\d+)/(cancel|hold|release))", [&c](const httplib::Request& req,
                                                                httplib::Response& res) {
    Caller caller;
    JobId id = 0;
    if (!AuthenticateUser(c, req, res, caller) || !JobIdOf(req, res, id)) return;
    const std::string action = req.matches[2];
    if (req.has_param("index")) {  // R-UX-3: ID[I] or ID[A-B]
      Result<std::pair<int32_t, int32_t>> range = ParseIndexRange(req.get_param_value("index"));
      if (!range) return SendError(res, range.error());
      const ArrayAction what = action == "cancel" ? ArrayAction::kCancel
                               : action == "hold" ? ArrayAction::kHold
                                                  : ArrayAction::kRelease;
      return Send(res, c.ActOnElements(caller, id, range->first, range->second, what));
    }
    if (action == "cancel") {
      Send(res, c.Cancel(caller, id));
    } else {
      Send(res, c.Hold(caller, id, action == "hold"));
    }
  });
  // issue 47: {"signal": "USR1"} to a running job (?index=A[-B]: those elements of an array).
  server.Post(R"(/v1/jobs/(-?\d+)/signal)", [&c](const httplib::Request& req,
                                                 httplib::Response& res) {
    Caller caller;
    JobId id = 0;
    json body;
    if (!UserJobRequest(c, req, res, caller, id, body)) return;
    if (!body.is_object() || !body.contains("signal") || !body["signal"].is_string() ||
        body.size() != 1) {
      return SendError(res, InvalidArgument("body: expected {\"signal\": NAME}, e.g. "
                                            "{\"signal\": \"USR1\"}"));
    }
    std::optional<std::pair<int32_t, int32_t>> range;
    if (req.has_param("index")) {
      Result<std::pair<int32_t, int32_t>> parsed = ParseIndexRange(req.get_param_value("index"));
      if (!parsed) return SendError(res, parsed.error());
      range = *parsed;
    }
    Send(res, c.Signal(caller, id, range, body["signal"].get<std::string>()));
  });
}

void HttpApi::InstallClusterRoutes(httplib::Server& server) {
  Controller& c = controller_;
  server.Get("/v1/hosts", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (AuthenticateUser(c, req, res, caller)) Send(res, c.Hosts());
  });
  server.Get("/v1/queues", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (AuthenticateUser(c, req, res, caller)) Send(res, c.Queues());
  });
  server.Get("/v1/limits", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (AuthenticateUser(c, req, res, caller)) Send(res, c.Limits());
  });
  server.Post(R"(/v1/queues/([^/]+)/(open|close|activate|inactivate))",
              [&c](const httplib::Request& req, httplib::Response& res) {
                Caller caller;
                if (!AuthenticateUser(c, req, res, caller)) return;
                Send(res, c.QueueAction(caller, req.matches[1], req.matches[2]));
              });
  server.Post(R"(/v1/hosts/([^/]+)/(open|close))",
              [&c](const httplib::Request& req, httplib::Response& res) {
                Caller caller;
                if (!AuthenticateUser(c, req, res, caller)) return;
                Send(res, c.HostAction(caller, req.matches[1], req.matches[2]));
              });
  server.Post("/v1/admin/reconfigure", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!AuthenticateUser(c, req, res, caller)) return;
    if (!caller.admin) {
      return SendError(
          res, Status(StatusCode::kPermissionDenied, caller.user + " is not an administrator"));
    }
    Send(res, c.Reconfigure());
  });
}

void HttpApi::InstallReservationRoutes(httplib::Server& server) {
  Controller& c = controller_;
  server.Get("/v1/reservations", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (AuthenticateUser(c, req, res, caller)) Send(res, c.ListReservations());
  });
  server.Post("/v1/reservations", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    json body;
    if (!AuthenticateUser(c, req, res, caller) || !ParseBody(req, res, kMaxBodyBytes, body)) return;
    Reply reply(c.CreateReservation(caller, body));
    if (reply.status == 200) reply.status = 201;  // created
    Send(res, reply);
  });
  server.Post("/v1/reservations/preview",
              [&c](const httplib::Request& req, httplib::Response& res) {
                Caller caller;
                json body;
                if (!AuthenticateUser(c, req, res, caller) ||
                    !ParseBody(req, res, kMaxBodyBytes, body)) {
                  return;
                }
                Send(res, c.PreviewReservation(caller, body));
              });
  server.Get(R"(/v1/reservations/([^/]+))",
             [&c](const httplib::Request& req, httplib::Response& res) {
               Caller caller;
               if (AuthenticateUser(c, req, res, caller)) Send(res, c.GetReservation(req.matches[1]));
             });
  server.Patch(R"(/v1/reservations/([^/]+))",
               [&c](const httplib::Request& req, httplib::Response& res) {
                 Caller caller;
                 json body;
                 if (!AuthenticateUser(c, req, res, caller) ||
                     !ParseBody(req, res, kMaxBodyBytes, body)) {
                   return;
                 }
                 Send(res, c.ModifyReservation(caller, req.matches[1], body));
               });
  server.Delete(R"(/v1/reservations/([^/]+))",
                [&c](const httplib::Request& req, httplib::Response& res) {
                  Caller caller;
                  if (!AuthenticateUser(c, req, res, caller)) return;
                  Send(res, c.DeleteReservation(caller, req.matches[1]));
                });
}

void HttpApi::InstallAgentRoutes(httplib::Server& server) {
  Controller& c = controller_;
  server.Post("/v1/agents/register", [&c](const httplib::Request& req, httplib::Response& res) {
    json body;
    Caller caller;
    if (!AuthenticateAgent(c, req, res, caller) || !ParseBody(req, res, kMaxBodyBytes, body) ||
        !AgentServes(caller, RegisteredHostName(body), res)) {
      return;
    }
    Send(res, c.Register(body));
  });
  server.Post(
      R"(/v1/agents/([^/]+)/heartbeat)", [&c](const httplib::Request& req, httplib::Response& res) {
        json body;
        Caller caller;
        if (!AuthenticateAgent(c, req, res, caller) || !AgentServes(caller, req.matches[1], res) ||
            !ParseBody(req, res, kMaxBodyBytes, body)) {
          return;
        }
        Send(res, c.Heartbeat(req.matches[1], body));
      });
  server.Post("/v1/agents/heartbeats", [&c](const httplib::Request& req, httplib::Response& res) {
    json body;
    Caller caller;
    if (!AuthenticateAgent(c, req, res, caller) || !ParseBody(req, res, kMaxBodyBytes, body) ||
        !AgentServesBatch(caller, body, res)) {
      return;
    }
    Send(res, c.HeartbeatBatch(body));  // many hosts of one agent (wire/agent_batch.h)
  });
}

void HttpApi::InstallHistoryRoutes(httplib::Server& server) {
  Controller& c = controller_;
  server.Get(R"(/v1/history(/summary)?)",
             [&c](const httplib::Request& req, httplib::Response& res) {
               Caller caller;
               if (!AuthenticateUser(c, req, res, caller)) return;
               std::map<std::string, std::string> query;
               for (const auto& [k, v] : req.params) query[k] = v;
               SendText(res, req.matches[1].length() > 0 ? c.HistorySummary(query) : c.History(query));
             });
  // A dashboard session (issue 47.8): opened by a user who authenticated otherwise (MUNGE);
  // a session cannot open the next one, so it ends when it expires.
  server.Post("/v1/ui/sessions", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    json body;
    if (!AuthenticateUser(c, req, res, caller) || !ParseBody(req, res, kMaxBodyBytes, body)) return;
    const std::string authorization = req.get_header_value("Authorization");
    if (authorization.starts_with("Bearer ") &&
        std::string_view(authorization).substr(7).starts_with(UiSessions::kPrefix)) {
      Send(res, Answer(Status(StatusCode::kPermissionDenied,
                              "a dashboard session cannot open another: log in again")));
      return;
    }
    Send(res, c.OpenUiSession(caller, body));
  });
  server.Get(R"(/v1/history/(\d+))", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!AuthenticateUser(c, req, res, caller)) return;
    JobId id = 0;
    const std::string text = req.matches[1];
    if (std::from_chars(text.data(), text.data() + text.size(), id).ec != std::errc()) {
      Send(res, Answer(InvalidArgument("job id: " + text + " is out of range")));
      return;
    }
    Send(res, c.JobHistory(id));
  });
  server.Patch(R"(/v1/jobs/(-?\d+))", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    JobId id = 0;
    json body;
    if (!UserJobRequest(c, req, res, caller, id, body)) return;
    Send(res, c.Modify(caller, id, body));
  });
  server.Post(R"(/v1/jobs/(-?\d+)/requeue)",
              [&c](const httplib::Request& req, httplib::Response& res) {
                Caller caller;
                JobId id = 0;
                if (!AuthenticateUser(c, req, res, caller) || !JobIdOf(req, res, id)) return;
                Send(res, c.Requeue(caller, id));
              });
}

void HttpApi::InstallEvents(httplib::Server& server) {
  Controller& c = controller_;
  server.Get("/v1/events", [this, &c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!AuthenticateUser(c, req, res, caller)) return;
    auto queue = std::make_shared<SseQueue>();
    const int id = c.Subscribe([queue](const JobEvent& e) { queue->Push(SharedSseFrame(e)); });
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, queue](size_t, httplib::DataSink& sink) {
          const std::string frames =
              queue->Take(std::chrono::seconds(1), kSseGather, [this] { return stopping_.load(); });
          if (stopping_ || queue->overflow()) {
            if (queue->overflow()) {
              sink.write(SseQueue::kOverflowFrame.data(), SseQueue::kOverflowFrame.size());
            }
            sink.done();
            return false;
          }
          if (frames.empty()) {
            const std::string ping = ": ping\n\n";
            return sink.write(ping.data(), ping.size());
          }
          return sink.write(frames.data(), frames.size());
        },
        [&c, id](bool) { c.Unsubscribe(id); });
  });
}

}  // namespace sluice::server
