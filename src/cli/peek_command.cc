// `sluice peek ID|ID[INDEX] [-n LINES] [-f]` (R-UX-5; bpeek, bpeek -f): the last lines of a
// running job's (or array element's) output, fetched from the job's agent through the controller
// (GET /v1/jobs/ID/peek, server/peek_broker.h). With -f it then prints what the job writes, once a
// second, until the job stops running (exit 0) or Ctrl-C. Exit codes as the other verbs: 2 for a
// bad id or a job that is not running, 1 when the controller or the agent does not answer.
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "client/array_format.h"
#include "client/rest_client.h"

namespace sluice::cli {
namespace {

using nlohmann::json;

struct PeekCommand {
  std::string server;
  std::string token;
  std::string id;  // ID or ID[INDEX]
  int64_t lines = 10;
  bool follow = false;
};

int Fail(const Status& status) {
  std::cerr << "error: " << status.message() << "\n";
  return status.code() == StatusCode::kFailedPrecondition ? 2 : client::ExitCodeFor(status);
}

int RunPeek(const PeekCommand& cmd) {
  Result<client::ClientOptions> options = client::ResolveClientOptions(cmd.server, cmd.token);
  if (!options) {
    std::cerr << "error: " << options.error().message() << "\n";
    return 2;
  }
  Result<client::JobRef> ref = client::ParseJobRef(cmd.id);
  if (ref && ref->index.find('-') != std::string::npos) {
    ref = InvalidArgument("job id '" + cmd.id + "': peek reads one job or one element, ID[INDEX]");
  }
  if (!ref) {
    std::cerr << "error: " << ref.error().message() << "\n";
    return 2;
  }
  client::RestClient rest(*options);
  const std::string path = ref->Path("/peek") + (ref->index.empty() ? "?" : "&");
  Result<json> tail = rest.Get(path + "lines=" + std::to_string(cmd.lines));
  if (!tail) return Fail(tail.error());
  std::cout << tail->value("text", "") << std::flush;
  if (!cmd.follow) return 0;
  Status followed = FollowPeek(rest, path, tail->value("size", int64_t{0}));
  return followed.ok() ? 0 : Fail(followed);
}

}  // namespace

Status FollowPeek(client::RestClient& rest, const std::string& path, int64_t next) {
  while (true) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    Result<json> more = rest.Get(path + "offset=" + std::to_string(next));
    if (!more && more.error().code() == StatusCode::kFailedPrecondition) return Status::Ok();
    if (!more) return more.error();
    std::cout << more->value("text", "") << std::flush;
    next = more->value("size", next);
  }
}

void RegisterPeekCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("peek", "the tail of a running job's output (bpeek)");
  auto c = std::make_shared<PeekCommand>();
  cmd->add_option("--server", c->server, "controller URL (default $SLUICE_SERVER)");
  cmd->add_option("--token", c->token, "user token (default $SLUICE_TOKEN)");
  cmd->add_option("id", c->id, "job id, or ID[INDEX] for an array element")->required();
  cmd->add_option("-n,--lines", c->lines, "how many of the last lines (default 10)")
      ->check(CLI::Range(1, 10000));
  cmd->add_flag("-f,--follow", c->follow, "keep printing what the job writes until it ends");
  cmd->callback([c, &exit_code] { exit_code = RunPeek(*c); });
}

}  // namespace sluice::cli
