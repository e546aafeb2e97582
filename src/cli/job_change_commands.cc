// sluice modify ID [-q Q] [-n N[,M]] [-R REQ] [-W LIMIT|none] [-b BEGIN|none] [-w DEP]
//                  [--priority P] [-J NAME]                        (bmod, scontrol update)
// sluice requeue ID...                                                         (brequeue)
// R-UX-7; docs/api.md PATCH /v1/jobs/{id} and POST /v1/jobs/{id}/requeue. `modify` prints
// `Job <N> is modified.`, or the server's `job <N> not modified: <cause>` and exits 2 when the
// change would make the job impossible (422, kOutOfRange, as a refused submission);
// `requeue` prints `Job <N> is requeued.` per job.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/rest_verbs.h"
#include "client/modify_request.h"

namespace sluice::cli {
namespace {

using nlohmann::json;
using namespace verbs;

struct ModifyCommand {
  Connection connection;
  int64_t id = 0;
  client::ModifyFlags flags;
};

int RunModify(const ModifyCommand& cmd) {
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  Result<json> body = client::BuildModifyBody(cmd.flags, now);
  if (!body) {
    std::cerr << "error: " << body.error().message() << "\n";
    return 2;
  }
  return WithClient(cmd.connection, [&](client::RestClient& rest) {
    Result<json> job = rest.Patch("/v1/jobs/" + std::to_string(cmd.id), *body);
    if (!job && job.error().code() == StatusCode::kOutOfRange) {  // 422: would never run
      std::cerr << job.error().message() << "\n";                 // "job N not modified: <cause>"
      return 2;
    }
    if (!job) return Fail(job.error());
    std::cout << "Job <" << cmd.id << "> is modified.\n";
    return 0;
  });
}

struct RequeueCommand {
  Connection connection;
  std::vector<int64_t> ids;
};

int RunRequeue(const RequeueCommand& cmd) {
  return WithClient(cmd.connection, [&](client::RestClient& rest) {
    int code = 0;
    for (int64_t id : cmd.ids) {
      Result<json> job = rest.Post("/v1/jobs/" + std::to_string(id) + "/requeue", json::object());
      if (!job) {
        code = std::max(code, Fail(job.error()));
        continue;
      }
      std::cout << "Job <" << id << "> is requeued.\n";
    }
    return code;
  });
}

}  // namespace

void RegisterJobChangeCommands(CLI::App& app, int& exit_code) {
  CLI::App* modify = app.add_subcommand("modify", "change a pending or held job (bmod habits)");
  auto m = std::make_shared<ModifyCommand>();
  AddConnectionFlags(modify, m->connection);
  modify->add_option("id", m->id, "job id")->required();
  modify->add_option("-q,--queue", m->flags.queue, "move it to this queue (to its end)");
  modify->add_option("-n,--tasks", m->flags.tasks, "tasks: N or MIN,MAX");
  modify->add_option("-R,--resreq", m->flags.resreq, "resource request ('' for the default)");
  modify->add_option("-W,--run-limit", m->flags.run_limit,
                     "run limit (minutes, H:M, 90s/10m/2h; none removes; admins: running jobs)");
  modify->add_option("-b,--begin", m->flags.begin, "begin time (as submit -b; none removes)");
  modify->add_option("-w,--depend", m->flags.depend, "dependency ('' removes)");
  modify->add_option("--priority", m->flags.priority, "priority within its queue");
  modify->add_option("-J,--name", m->flags.name, "job name");
  modify->callback([m, &exit_code] { exit_code = RunModify(*m); });

  CLI::App* requeue = app.add_subcommand("requeue", "requeue running or ended jobs (brequeue)");
  auto r = std::make_shared<RequeueCommand>();
  AddConnectionFlags(requeue, r->connection);
  requeue->add_option("ids", r->ids, "job ids")->required();
  requeue->callback([r, &exit_code] { exit_code = RunRequeue(*r); });
}

}  // namespace sluice::cli
