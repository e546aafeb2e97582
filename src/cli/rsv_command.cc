// Advance reservations (R-RSV-1, docs/reservations.md "Commands"), over /v1/reservations:
//   sluice rsv add NAME (-m HOSTS | -n SLOTS [-R REQ]) -b BEGIN (-e END | -d DURATION)
//                  [-u USERS] [-g GROUPS] [--maint] [--ignore-jobs] [--overrun DURATION]
//                  [--recur 'CRON' [--tz ZONE]]                              (brsvadd)
//   sluice rsv list [--json]                                                 (brsvs)
//   sluice rsv show NAME... [--json]                      (scontrol show reservation)
//   sluice rsv modify NAME [the options of add; --no-maint, --no-ignore-jobs, --recur none]
//   sluice rsv delete NAME...                                                (brsvdel)
//   sluice rsv preview [NAME] (the options of add) [--json]
// Option values: client/rsv_args.h; the bodies: client/rsv_request.h; the text:
// client/rsv_format.h. --recur without --tz takes this machine's zone ($TZ, else
// /etc/localtime's name). Output: `Reservation <NAME> is created.` (modified, deleted); errors
// as every client verb (`error: <server's message>`, exit 2 for bad input, 1 otherwise).
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/local_zone.h"
#include "cli/rest_verbs.h"
#include "client/printable.h"
#include "client/rsv_format.h"
#include "client/rsv_request.h"

namespace sluice::cli {
namespace {

using nlohmann::json;
using namespace verbs;

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct RsvCommand {
  Connection connection;
  client::RsvFlags flags;
  std::vector<std::string> names;  // show, delete
  bool as_json = false;
};

void AddRsvOptions(CLI::App* cmd, RsvCommand& c, bool modify) {
  client::RsvFlags& f = c.flags;
  cmd->add_option("-m,--hosts", f.hosts, "hosts: names and ranges, e.g. h[1-8],gpu1");
  cmd->add_option("-n,--slots", f.slots, "a number of slots instead of hosts");
  cmd->add_option("-R,--request", f.request, "with -n: the hosts' request, e.g. 'select[gpu]'");
  cmd->add_option("-b,--begin", f.begin,
                  "begin: now, now+30m, +2h, 2026-12-06T15:00[:ss][Z|+01:00] or [[Y:]M:D:]h:m");
  cmd->add_option("-e,--end", f.end, "end, as -b (with --recur: the recurrence's end)");
  cmd->add_option("-d,--duration", f.duration, "length: 90m, 2h, 1d, 1h30m, 1:30:00 or MINUTES");
  cmd->add_option("-u,--users", f.users, "users who may run in it, comma-separated");
  cmd->add_option("-g,--groups", f.groups, "groups whose users may run in it");
  cmd->add_flag_callback(
      "--maint", [&f] { f.maint = true; }, "maintenance: outranks other reservations");
  cmd->add_flag_callback(
      "--ignore-jobs", [&f] { f.ignore_jobs = true; }, "create it over running jobs (they run on)");
  if (modify) {
    cmd->add_flag_callback(
        "--no-maint", [&f] { f.maint = false; }, "no longer maintenance");
    cmd->add_flag_callback(
        "--no-ignore-jobs", [&f] { f.ignore_jobs = false; }, "no longer over running jobs");
  }
  cmd->add_option("--overrun", f.overrun, "how long its jobs may run past a window's end");
  cmd->add_option(
      "--recur", f.recur,
      std::string("repeat by cron: 'MIN HOUR DAY MONTH WEEKDAY', e.g. '0 8 * * mon-fri'") +
          (modify ? " (none: stop repeating)" : ""));
  cmd->add_option("--tz", f.tz, "the time zone of --recur (default: this machine's)");
}

// The body for `kind`, or the exit code of a bad option (printed).
Result<json> Body(RsvCommand& c, client::RsvBody kind) {
  if (c.flags.recur && *c.flags.recur != "none" && !c.flags.tz) {
    const std::string zone = LocalZoneName();
    if (!zone.empty()) c.flags.tz = zone;
  }
  return client::BuildRsvBody(c.flags, kind, NowSeconds());
}

int BadInput(const Status& status) {
  std::cerr << "error: " << status.message() << "\n";
  return 2;
}

int RunAdd(RsvCommand& c) {
  Result<json> body = Body(c, client::RsvBody::kAdd);
  if (!body) return BadInput(body.error());
  return WithClient(c.connection, [&](client::RestClient& rest) {
    Result<json> created = rest.Post("/v1/reservations", *body);
    if (!created) return Fail(created.error());
    std::cout << "Reservation <" << client::PrintableField(c.flags.name) << "> is created.\n";
    return 0;
  });
}

int RunModify(RsvCommand& c) {
  Result<json> body = Body(c, client::RsvBody::kModify);
  if (!body) return BadInput(body.error());
  return WithClient(c.connection, [&](client::RestClient& rest) {
    Result<json> changed = rest.Patch("/v1/reservations/" + QueryEscape(c.flags.name), *body);
    if (!changed) return Fail(changed.error());
    std::cout << "Reservation <" << client::PrintableField(c.flags.name) << "> is modified.\n";
    return 0;
  });
}

int RunPreview(RsvCommand& c) {
  Result<json> body = Body(c, client::RsvBody::kPreview);
  if (!body) return BadInput(body.error());
  return WithClient(c.connection, [&](client::RestClient& rest) {
    Result<json> preview = rest.Post("/v1/reservations/preview", *body);
    if (!preview) return Fail(preview.error());
    std::cout << (c.as_json ? preview->dump(2) + "\n"
                            : client::PrintableText(client::FormatRsvPreview(*preview)));
    return 0;
  });
}

int RunList(const RsvCommand& c) {
  return WithClient(c.connection, [&](client::RestClient& rest) {
    Result<json> list = rest.Get("/v1/reservations");
    if (!list) return Fail(list.error());
    std::cout << (c.as_json
                      ? list->dump(2) + "\n"
                      : client::PrintableText(client::FormatReservations(*list, NowSeconds())));
    return 0;
  });
}

// show and delete: each name in turn; the exit code is the worst.
int RunEach(const RsvCommand& c, bool remove) {
  return WithClient(c.connection, [&](client::RestClient& rest) {
    int code = 0;
    for (const std::string& name : c.names) {
      const std::string path = "/v1/reservations/" + QueryEscape(name);
      Result<json> reply = remove ? rest.Delete(path) : rest.Get(path);
      if (!reply) {
        std::cerr << "Reservation <" << client::PrintableField(name) << ">: ";
        code = std::max(code, Fail(reply.error()));
      } else if (remove) {
        std::cout << "Reservation <" << client::PrintableField(name) << "> is deleted.\n";
      } else {
        std::cout << (c.as_json ? reply->dump(2) + "\n"
                                : client::PrintableText(
                                      client::FormatReservationLong(*reply, NowSeconds())));
      }
    }
    return code;
  });
}

// One `rsv` verb: its options, its callback.
template <typename Run>
CLI::App* AddVerb(CLI::App* rsv, const std::string& verb, const std::string& help, int& exit_code,
                  Run run, std::shared_ptr<RsvCommand>& c) {
  CLI::App* cmd = rsv->add_subcommand(verb, help);
  c = std::make_shared<RsvCommand>();
  AddConnectionFlags(cmd, c->connection);
  cmd->callback([c, run, &exit_code] { exit_code = run(*c); });
  return cmd;
}

}  // namespace

void RegisterRsvCommand(CLI::App& app, int& exit_code) {
  CLI::App* rsv = app.add_subcommand(
      "rsv", "advance reservations: add, list, show, modify, delete, preview (brsvadd, brsvs)");
  rsv->require_subcommand(1);
  std::shared_ptr<RsvCommand> c;

  CLI::App* add =
      AddVerb(rsv, "add", "reserve hosts or slots for a time; admins", exit_code, RunAdd, c);
  add->add_option("name", c->flags.name, "the reservation's name")->required();
  AddRsvOptions(add, *c, false);

  CLI::App* list = AddVerb(rsv, "list", "list reservations", exit_code, RunList, c);
  list->add_flag("--json", c->as_json, "print the API's JSON");

  CLI::App* show = AddVerb(
      rsv, "show", "every field of reservations and their next windows", exit_code,
      [](const RsvCommand& x) { return RunEach(x, false); }, c);
  show->add_option("names", c->names, "reservation names")->required();
  show->add_flag("--json", c->as_json, "print the API's JSON");

  CLI::App* modify =
      AddVerb(rsv, "modify", "change a reservation; admins", exit_code, RunModify, c);
  modify->add_option("name", c->flags.name, "the reservation's name")->required();
  AddRsvOptions(modify, *c, true);

  CLI::App* del = AddVerb(
      rsv, "delete", "delete reservations; admins", exit_code,
      [](const RsvCommand& x) { return RunEach(x, true); }, c);
  del->add_option("names", c->names, "reservation names")->required();

  CLI::App* preview = AddVerb(rsv, "preview",
                              "the running jobs a reservation would overlap and the jobs it "
                              "would delay, without making it",
                              exit_code, RunPreview, c);
  preview->add_option("name", c->flags.name, "a name (optional)");
  AddRsvOptions(preview, *c, false);
  preview->add_flag("--json", c->as_json, "print the API's JSON");
}

}  // namespace sluice::cli
