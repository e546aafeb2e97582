#include "server/http_api.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

namespace sluice::server {

using nlohmann::json;

namespace {

void Send(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  res.set_content(reply.text.empty() ? reply.body.dump() : reply.text, "application/json");
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  Send(res, Reply::Error(status, message));
}

std::string BearerToken(const httplib::Request& req) {
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kPrefix = "Bearer ";
  if (header.size() <= kPrefix.size() || header.compare(0, kPrefix.size(), kPrefix) != 0) return "";
  return header.substr(kPrefix.size());
}

// Parses a JSON body; on failure fills `res` with a 4xx naming the problem.
bool ParseBody(const httplib::Request& req, httplib::Response& res, size_t limit, json& out) {
  if (req.body.size() > limit) {
    SendError(res, 413, "body: " + std::to_string(req.body.size()) + " bytes exceed the limit of " +
                            std::to_string(limit));
    return false;
  }
  try {
    out = json::parse(req.body);
  } catch (const json::parse_error& e) {
    SendError(res, 400, "malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
    return false;
  }
  return true;
}

// One SSE subscriber: events queued by the controller, drained by the connection's thread.
struct SseQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> events;
  bool overflow = false;
};

}  // namespace

void HttpApi::Install(httplib::Server& server) {
  // Long polls hold a thread each: 64 agents with two polls each, plus users.
  server.new_task_queue = [] { return new httplib::ThreadPool(256); };
  server.set_payload_max_length(kMaxBatchBodyBytes);
  server.set_keep_alive_max_count(100000);
  server.set_keep_alive_timeout(5);  // an idle keep-alive connection holds a pool thread
  server.set_read_timeout(30);
  server.set_write_timeout(30);
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      // cpp-httplib also caps form-encoded bodies at 8 KiB: say which applies.
      SendError(res, 413, "body exceeds the limit of " + std::to_string(kMaxBatchBodyBytes) +
                              " bytes (or 8192 bytes without Content-Type: application/json)");
    } else if (res.status == 404) {
      SendError(res, 404, "no route " + req.method + " " + req.path);
    } else if (res.status == 400) {
      // cpp-httplib refuses a POST without Content-Length before any route runs.
      SendError(res, 400, "malformed HTTP request " + req.method + " " + req.path +
                              " (a POST needs a body with Content-Length: send {} with "
                              "Content-Type: application/json)");
    } else {
      SendError(res, res.status, "request failed");
    }
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    SendError(res, 500, what);
  });

  Controller& c = controller_;
  // Authentication: a user (or, with `agent`, the agent token). Fills `res` on refusal.
  auto user = [&c](const httplib::Request& req, httplib::Response& res, Caller& caller) {
    bool agent = false;
    if (!c.Authenticate(BearerToken(req), caller, agent)) {
      SendError(res, 401, "missing or unknown token (send Authorization: Bearer <token>)");
      return false;
    }
    if (agent) {
      SendError(res, 403, "the agent token may only call /v1/agents/...");
      return false;
    }
    return true;
  };
  auto agent_only = [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    bool agent = false;
    if (!c.Authenticate(BearerToken(req), caller, agent)) {
      SendError(res, 401, "missing or unknown token (send Authorization: Bearer <token>)");
      return false;
    }
    if (!agent) {
      SendError(res, 403, "only the agent token may call /v1/agents/...");
      return false;
    }
    return true;
  };

  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server.Get("/metrics", [&c](const httplib::Request&, httplib::Response& res) {
    res.set_content(c.Metrics(), "text/plain; version=0.0.4");
  });

  server.Post("/v1/jobs", [&c, user](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!user(req, res, caller)) return;
    json body;
    if (!ParseBody(req, res, kMaxBodyBytes, body)) return;
    Send(res, c.Submit(caller, body));
  });
  server.Post("/v1/jobs/batch", [&c, user](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!user(req, res, caller)) return;
    json body;
    if (!ParseBody(req, res, kMaxBatchBodyBytes, body)) return;
    Send(res, c.SubmitBatch(caller, body));
  });
  server.Get("/v1/jobs", [&c, user](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!user(req, res, caller)) return;
    std::map<std::string, std::string> query;
    for (const auto& [k, v] : req.params) query[k] = v;
    Send(res, c.ListJobs(query));
  });
  server.Get(R"(/v1/jobs/(-?\d+))", [&c, user](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!user(req, res, caller)) return;
    Send(res, c.GetJob(std::stoll(req.matches[1])));
  });
  server.Post(R"(/v1/jobs/(-?\d+)/(cancel|hold|release))",
              [&c, user](const httplib::Request& req, httplib::Response& res) {
                Caller caller;
                if (!user(req, res, caller)) return;
                const JobId id = std::stoll(req.matches[1]);
                const std::string action = req.matches[2];
                if (action == "cancel") {
                  Send(res, c.Cancel(caller, id));
                } else {
                  Send(res, c.Hold(caller, id, action == "hold"));
                }
              });
  server.Get("/v1/hosts", [&c, user](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (user(req, res, caller)) Send(res, c.Hosts());
  });
  server.Get("/v1/queues", [&c, user](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (user(req, res, caller)) Send(res, c.Queues());
  });
  server.Get("/v1/limits", [&c, user](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (user(req, res, caller)) Send(res, c.Limits());
  });
  server.Post(R"(/v1/queues/([^/]+)/(open|close|activate|inactivate))",
              [&c, user](const httplib::Request& req, httplib::Response& res) {
                Caller caller;
                if (user(req, res, caller)) Send(res, c.QueueAction(caller, req.matches[1], req.matches[2]));
              });
  server.Post(R"(/v1/hosts/([^/]+)/(open|close))",
              [&c, user](const httplib::Request& req, httplib::Response& res) {
                Caller caller;
                if (user(req, res, caller)) Send(res, c.HostAction(caller, req.matches[1], req.matches[2]));
              });
  server.Post("/v1/admin/reconfigure", [&c, user](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!user(req, res, caller)) return;
    if (!caller.admin) return SendError(res, 403, caller.user + " is not an administrator");
    Send(res, c.Reconfigure());
  });

  server.Post("/v1/agents/register", [&c, agent_only](const httplib::Request& req, httplib::Response& res) {
    if (!agent_only(req, res)) return;
    json body;
    if (!ParseBody(req, res, kMaxBodyBytes, body)) return;
    Send(res, c.Register(body));
  });
  server.Post(R"(/v1/agents/([^/]+)/heartbeat)",
              [&c, agent_only](const httplib::Request& req, httplib::Response& res) {
                if (!agent_only(req, res)) return;
                json body;
                if (!ParseBody(req, res, kMaxBodyBytes, body)) return;
                Send(res, c.Heartbeat(req.matches[1], body));
              });

  server.Get("/v1/events", [this, &c, user](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!user(req, res, caller)) return;
    auto queue = std::make_shared<SseQueue>();
    const int id = c.Subscribe([queue](const JobEvent& e) {
      json data = {{"id", e.id}, {"state", e.state},
                   {"reason", e.reason ? json(*e.reason) : json(nullptr)}};
      std::lock_guard lock(queue->mu);
      if (queue->events.size() > 100'000) {
        queue->overflow = true;  // a stalled reader is dropped rather than growing forever
        return;
      }
      queue->events.push_back("event: job\ndata: " + data.dump() + "\n\n");
      queue->cv.notify_one();
    });
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, queue](size_t, httplib::DataSink& sink) {
          std::unique_lock lock(queue->mu);
          queue->cv.wait_for(lock, std::chrono::seconds(1),
                             [&] { return !queue->events.empty() || stopping_; });
          if (stopping_ || queue->overflow) {
            sink.done();
            return false;
          }
          if (queue->events.empty()) {
            const std::string ping = ": ping\n\n";
            return sink.write(ping.data(), ping.size());
          }
          std::string chunk;
          while (!queue->events.empty()) {
            chunk += queue->events.front();
            queue->events.pop_front();
          }
          lock.unlock();
          return sink.write(chunk.data(), chunk.size());
        },
        [&c, id](bool) { c.Unsubscribe(id); });
  });
}

}  // namespace sluice::server
