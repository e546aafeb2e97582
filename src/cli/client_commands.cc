// The user verbs speaking REST to the controller (docs/api.md), with bsub/bjobs habits:
//   sluice submit [-q Q] [-n N[,M]] [-R REQ] [-W LIMIT] [-w DEP] [-b TIME] [-x] [-H] [-U RSV]
//                 [-o FILE] [-e FILE] [-J NAME[IDX]%N] [-a IDX%N] [-P PROJECT] [--cwd DIR]
//                 [--parsable] [--wait]
//                 -- CMD... | FILE [ARGS...] | < FILE      (scripts: cli/submit_script.h)
//   sluice jobs [-u USER] [-q QUEUE] [-s STATES] [-p] [-l] [-A] [--json] [ID|ID[I]...]
//   sluice cancel|hold|release ID|ID[I]|ID[A-B]...   (arrays: cli.md "Job arrays")
//   sluice hosts|queues|limits [--json]
//   sluice queue open|close|activate|inactivate QUEUE...   (badmin qopen/qclose/qact/qinact)
//   sluice host open|close HOST...                         (badmin hopen/hclose)
// Every verb takes --server/--token (default $SLUICE_SERVER/$SLUICE_TOKEN). Output: `submit`
// prints `Job <N> is submitted to queue <q>.` (only `N` with --parsable, R-SRV-5b); `jobs
// --json` prints the API's job array. Errors go to stderr as `error: <server's message>`.
// `submit` refused as impossible (422, R-UX-2) prints `Job not submitted: <cause>` and exits 2;
// `submit --wait` exits with the job's exit code (client/wait_exit.h).
// Exit codes: 0 ok; 2 bad input (bad flags, 400/404/413 from the server); 1 other failures
// (unreachable, 401, 403, 409, 5xx). A verb over several ids does them all and returns the
// worst code.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/job_wait.h"
#include "cli/rest_verbs.h"
#include "cli/submit_script.h"
#include "client/array_format.h"
#include "client/text_fields.h"
#include "client/format.h"
#include "client/job_long_format.h"
#include "client/jobs_output.h"
#include "client/json_array_stream.h"
#include "client/printable.h"
#include "client/rest_client.h"
#include "client/submit_request.h"
#include "wire/signal_name.h"

extern char** environ;  // POSIX: the process environment

namespace sluice::cli {
namespace {

using nlohmann::json;

using verbs::AddConnectionFlags;
using verbs::Connection;
using verbs::Fail;
using verbs::QueryEscape;
using verbs::WithClient;

// ---- submit ----

struct SubmitCommand {
  Connection connection;
  client::SubmitFlags flags;
  bool parsable = false;
  bool wait = false;       // R-UX-5
  bool dash_dash = false;  // `--` came before the command: never a script (R-UX-1)
};

int RunSubmit(const SubmitCommand& cmd) {
  std::error_code error;
  const std::string submit_dir = std::filesystem::current_path(error).string();
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  Result<Submission> submission =
      ResolveSubmission(cmd.flags, cmd.dash_dash, isatty(STDIN_FILENO) ? nullptr : &std::cin, now,
                        CallerEnvironment());
  if (!submission) {
    std::cerr << "error: " << submission.error().message() << "\n";
    return 2;
  }
  for (const std::string& warning : submission->warnings)
    std::cerr << "warning: " << warning << "\n";
  // The job's environment and file mode are the submitter's (issue 47), as sbatch and bsub.
  submission->flags.environment = CallerEnvironment();
  submission->flags.umask = CallerUmask();
  Result<json> body = client::BuildSubmitBody(submission->flags, submit_dir, now);
  if (!body) {
    std::cerr << "error: " << body.error().message() << "\n";
    return 2;
  }
  return WithClient(cmd.connection, [&](client::RestClient& rest) {
    Result<json> reply = rest.Post("/v1/jobs", *body);
    if (!reply && reply.error().code() == StatusCode::kOutOfRange) {  // 422 (R-UX-2)
      std::cerr << "Job not submitted: " << reply.error().message() << "\n";
      return 2;
    }
    if (!reply) return Fail(reply.error());
    const json id = reply->value("id", json());
    if (cmd.parsable) {
      std::cout << id.dump() << "\n";
      return cmd.wait && id.is_number_integer() ? WaitForJob(rest, id.get<int64_t>()) : 0;
    }
    std::string queue = submission->flags.queue;
    if (queue.empty()) {
      Result<json> job = rest.Get("/v1/jobs/" + id.dump());
      if (job && job->contains("queue") && (*job)["queue"].is_string()) {
        queue = (*job)["queue"].get<std::string>();
      }
    }
    std::cout << "Job <" << id.dump() << "> is submitted to "
              << (queue.empty() ? "the default queue" : "queue <" + queue + ">") << ".\n";
    if (!cmd.wait || !id.is_number_integer()) return 0;
    std::cout.flush();
    return WaitForJob(rest, id.get<int64_t>());
  });
}

}  // namespace

void AddJobShapeFlags(CLI::App* cmd, client::SubmitFlags& f) {
  cmd->add_option("-q,--queue", f.queue, "queue (default: the cluster's default queue)");
  cmd->add_option("-n,--tasks", f.tasks, "tasks: N, or MIN,MAX for a range");
  cmd->add_option("-R,--resreq", f.resreq, "resource request, e.g. 'span[hosts=1]'");
  cmd->add_option("--gpu", f.gpu, "GPUs as bsub -gpu: 'num=2:gmodel=A100', or - for one");
  cmd->add_option("-W,--run-limit", f.run_limit, "run limit: MINUTES, H:M, H:M:S or 90s/10m/2h");
  cmd->add_option("-J,--name", f.name, "job name; NAME[1-50]%5 submits an array (bsub -J)");
  cmd->add_option("-P,--project", f.project, "project");
  cmd->add_option("--cwd", f.cwd, "working directory (default: the current directory)");
  cmd->add_option("-U,--reservation", f.reservation,
                  "run inside this advance reservation (bsub -U, sbatch --reservation)");
  cmd->add_option("--export", f.export_env,
                  "the job's environment: ALL (default: yours), NONE, or [ALL,]VAR[=VALUE],...");
}

namespace {

void RegisterSubmit(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("submit", "submit a job (bsub/sbatch habits)");
  auto c = std::make_shared<SubmitCommand>();
  AddConnectionFlags(cmd, c->connection);
  client::SubmitFlags& f = c->flags;
  AddJobShapeFlags(cmd, f);
  cmd->add_option("-w,--depend", f.depend, "dependency expression, e.g. 'done(12)'");
  cmd->add_option("-b,--begin", f.begin, "begin time: epoch, +DURATION, HH:MM or ISO date");
  cmd->add_flag("-x,--exclusive", f.exclusive, "whole hosts");
  cmd->add_flag("-H,--hold", f.hold, "submit held (release with `sluice release`)");
  cmd->add_option("-o,--output", f.output, "stdout file (%j: job id)");
  cmd->add_option("-e,--error", f.error, "stderr file (default: the output file)");
  cmd->add_option("-a,--array", f.array,
                  "job array: indexes 1-1000, 1,5,7-9 or 1-99:2, then %N to run at most N at once");
  cmd->add_option("--priority", f.priority, "priority within the queue");
  cmd->add_flag("--parsable", c->parsable, "print only the job id");
  cmd->add_flag("--wait,-K", c->wait,
                "wait for the job to end; exit with its exit code (Ctrl-C cancels it)");
  cmd->add_option("command", f.command,
                  "a job script FILE [ARGS] (none: the script on stdin), or a command: one shell "
                  "string, or an argv after --");
  cmd->callback([c, cmd, &exit_code] {
    const std::vector<std::string> rest = cmd->remaining();
    c->dash_dash = std::find(rest.begin(), rest.end(), "--") != rest.end();
    exit_code = RunSubmit(*c);
  });
}

// ---- jobs ----

struct JobsCommand {
  Connection connection;
  std::string user;
  std::string queue;
  std::string states;
  bool pending = false;
  bool as_json = false;
  bool long_format = false;  // R-UX-4
  bool arrays = false;       // R-UX-3: -A
  std::string format;        // -o FIELDS (issue 47.7)
  std::vector<std::string> ids;
};

// -o's fields, and the members the controller is asked for to print them.
std::vector<std::string> FormatFields(const std::string& format, std::string& members) {
  std::vector<std::string> fields;
  std::set<std::string> asked;
  for (std::string_view part : client::SplitFields(format, ',')) {
    std::string field(part);
    field.erase(0, field.find_first_not_of(' '));
    field.erase(field.find_last_not_of(' ') + 1);
    if (field.empty()) continue;
    fields.push_back(field);
    if (field == "elapsed") {
      asked.insert({"start_time", "end_time"});
    } else if (field == "id") {
      asked.insert({"id", "index", "array"});
    } else {
      asked.insert(field);
    }
  }
  for (const std::string& member : asked) members += (members.empty() ? "" : ",") + member;
  return fields;
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `jobs ID` of an array (issue 47.5), as `bjobs ID`: its elements that have their own objects
// (with -p the waiting ones), a page of 1,000 at a time (`array=ID`), then the array's object
// for the waiting elements that have none yet, as a listing shows it.
Status AddArrayElements(client::RestClient& rest, const JobsCommand& cmd, json array,
                        client::JobsOutput& out) {
  const int64_t id = array.value("id", int64_t{0});
  const std::string filter = cmd.pending ? "&state=PENDING,HELD&pending_reasons=1" : "";
  std::map<std::string, int64_t> listed;  // elements by state
  constexpr int64_t kPage = 1000;
  for (int64_t offset = 0;; offset += kPage) {
    Result<json> page = rest.Get("/v1/jobs?array=" + std::to_string(id) + "&user=all&sort=id" +
                                 "&order=asc&limit=" + std::to_string(kPage) +
                                 "&offset=" + std::to_string(offset) + filter);
    if (!page) return page.error();
    for (const json& element : *page) {
      ++listed[element.value("state", "")];
      out.Add(element);
    }
    if (static_cast<int64_t>(page->size()) < kPage) break;
  }
  const json counts = array.value("elements", json::object());
  const int64_t pending = counts.value("PENDING", int64_t{0}) - listed["PENDING"];
  const int64_t held = counts.value("HELD", int64_t{0}) - listed["HELD"];
  if (pending > 0 || held > 0) {
    array["state"] = pending > 0 ? "PENDING" : "HELD";
    out.Add(array);
  }
  return Status::Ok();
}

// `jobs ID...`: each job (an array's elements) to `out`; the worst exit code of the ids.
int AddNamedJobs(client::RestClient& rest, const JobsCommand& cmd, client::JobsOutput& out) {
  int code = 0;
  for (const std::string& text : cmd.ids) {
    Result<client::JobRef> ref = client::ParseJobRef(text);
    if (!ref) {
      code = std::max(code, Fail(ref.error()));
      continue;
    }
    Result<json> job = rest.Get(ref->Path());
    if (!job) {
      code = std::max(code, Fail(job.error()));
      continue;
    }
    if (ref->index.empty() && job->contains("array") && !cmd.long_format && !cmd.as_json &&
        !cmd.arrays) {
      Status expanded = AddArrayElements(rest, cmd, std::move(*job), out);
      if (!expanded.ok()) code = std::max(code, Fail(expanded));
      continue;
    }
    out.Add(*job);
  }
  return code;
}

// The listing `jobs` asks for without ids: the filters, and only the members it prints.
std::string ListingPath(const JobsCommand& cmd) {
  std::string query = "/v1/jobs?";
  // The caller's own jobs unless -u names someone (`all`: everyone's), as bjobs does.
  query += "user=" + QueryEscape(cmd.user.empty() ? "@me" : cmd.user) + "&";
  if (!cmd.queue.empty()) query += "queue=" + QueryEscape(cmd.queue) + "&";
  if (!cmd.states.empty()) query += "state=" + QueryEscape(cmd.states) + "&";
  // -p lists waiting jobs only, in every format (--json too; issue 47.7).
  if (cmd.pending && cmd.states.empty()) query += "state=PENDING,HELD&";
  if (cmd.pending) query += "pending_reasons=1&";
  // The tables show a few members: fetching only those keeps 100,000 jobs quick to parse.
  if (cmd.long_format && !cmd.pending) query += "pending_reasons=1&";
  if (cmd.arrays) query += "arrays=1&fields=id,name,user,queue,array,elements&";
  if (!cmd.format.empty()) {
    std::string members;
    FormatFields(cmd.format, members);
    query += "fields=" + QueryEscape(members) + "&";
  } else if (!cmd.as_json && !cmd.long_format && !cmd.arrays) {
    query += "fields=" + std::string(client::kTableJobFields) + "&";
  }
  query.pop_back();
  return query;
}

std::unique_ptr<client::JobsOutput> OutputOf(const JobsCommand& cmd) {
  using client::JobsLayout;
  std::string members;
  const JobsLayout layout = !cmd.format.empty() ? JobsLayout::kFields
                            : cmd.as_json       ? JobsLayout::kJson
                            : cmd.arrays        ? JobsLayout::kArrays
                            : cmd.long_format   ? JobsLayout::kLong
                            : cmd.pending       ? JobsLayout::kPending
                                                : JobsLayout::kTable;
  return client::NewJobsOutput(std::cout, layout, NowSeconds(), FormatFields(cmd.format, members));
}

// Prints as the listing arrives (issue 45: a million jobs are a gigabyte of JSON): each job
// object is parsed alone (client/json_array_stream.h) and printed (client/jobs_output.h).
int RunJobs(const JobsCommand& cmd) {
  return WithClient(cmd.connection, [&](client::RestClient& rest) {
    std::unique_ptr<client::JobsOutput> out = OutputOf(cmd);
    if (!cmd.ids.empty()) {
      const int code = AddNamedJobs(rest, cmd, *out);
      out->Finish();
      return code;
    }
    int64_t received = 0;
    const Status listed = client::ForEachElement(rest, ListingPath(cmd), [&](json job) {
      ++received;
      out->Add(job);
      return true;
    });
    // A listing that broke part way: what came is printed, then why the rest is missing.
    if (received > 0 || listed.ok()) out->Finish();
    std::cout.flush();
    return listed.ok() ? 0 : Fail(listed);
  });
}

void RegisterJobs(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("jobs", "list jobs (bjobs/squeue habits)");
  auto c = std::make_shared<JobsCommand>();
  AddConnectionFlags(cmd, c->connection);
  cmd->add_option("-u,--user", c->user, "this user's jobs (default: yours; `all`: everyone's)");
  cmd->add_option("-q,--queue", c->queue, "only this queue's jobs");
  cmd->add_option("-s,--state", c->states, "only these states, e.g. PENDING,RUNNING");
  cmd->add_flag("-p,--pending", c->pending, "pending jobs with their reasons (bjobs -p)");
  cmd->add_flag("--json", c->as_json, "print the JSON array of job objects");
  cmd->add_flag("-l,--long", c->long_format,
                "every field in labelled lines (bjobs -l, scontrol show job)");
  cmd->add_flag("-A,--arrays", c->arrays, "one line per job array, its elements by state");
  cmd->add_option("-o,--format", c->format,
                  "a table of these fields, e.g. id,name,state,elapsed,hosts (the API's job "
                  "members, docs/api.md, and elapsed)");
  cmd->add_option("ids", c->ids,
                  "job ids, ID[INDEX] for an array element (default: all jobs matching the "
                  "filters)");
  cmd->callback([c, &exit_code] { exit_code = RunJobs(*c); });
}

// ---- cancel / hold / release ----

struct ActionCommand {
  Connection connection;
  std::vector<std::string> ids;
  // cancel only (scancel -u/-t/-n, bkill -u 0): the jobs these select, with or without ids.
  std::string user, states, name;
  std::optional<std::string> signal;  // cancel --signal: send it instead (scancel -s, bkill -s)
  bool Filtered() const { return !user.empty() || !states.empty() || !name.empty(); }
};

// The refs of the jobs `c`'s filters select (unfinished ones unless -s says otherwise), as
// `sluice jobs` would list them; an array's record stands for its elements not yet jobs.
Result<std::vector<std::string>> SelectedJobs(client::RestClient& rest, const ActionCommand& c) {
  const std::string unfinished = c.signal ? "RUNNING" : "PENDING,HELD,RUNNING";
  // arrays=1: an array is selected by its own state (RUNNING while an element runs), not as
  // the stand-in for its waiting elements a listing shows: `cancel -s PENDING` must not take
  // the whole array, running elements included.
  std::string query =
      "arrays=1&fields=id,index,array,name&state=" + (c.states.empty() ? unfinished : c.states);
  query += "&user=" + QueryEscape(c.user.empty() ? "@me" : c.user);  // the caller's by default
  Result<json> jobs = rest.Get("/v1/jobs?" + query);
  if (!jobs) return jobs.error();
  std::vector<std::string> refs;
  for (const json& job : *jobs) {
    // A signal goes to the running elements, listed apart: not again through their array.
    const bool array = job.contains("array") && job["array"].is_string() &&
                       !(job.contains("index") && job["index"].is_number_integer());
    if (c.signal && array) continue;
    if (c.name.empty() || job.value("name", "") == c.name) refs.push_back(client::JobIdText(job));
  }
  return refs;
}

// Runs `verb` on each job named or selected; the exit code is the worst.
int RunAction(client::RestClient& rest, const ActionCommand& c, const std::string& verb,
              std::string done_text) {
  json body = json::object();
  std::string action = verb;  // the POST's last path word
  if (c.signal) {  // checked here: a number is this machine's
    Result<std::string> signal = wire::CanonicalSignal(*c.signal);
    if (!signal) {
      std::cerr << "error: --" << signal.error().message() << "\n";
      return 2;
    }
    action = "signal";
    done_text = "is being signalled (SIG" + *signal + ")";
    body["signal"] = *signal;
  }
  std::vector<std::string> ids = c.ids;
  if (c.Filtered()) {
    Result<std::vector<std::string>> selected = SelectedJobs(rest, c);
    if (!selected) return Fail(selected.error());
    if (selected->empty() && ids.empty()) std::cerr << "sluice " << verb << ": no job matches\n";
    ids.insert(ids.end(), selected->begin(), selected->end());
  } else if (ids.empty()) {
    std::cerr << "error: give job ids" << (verb == "cancel" ? " or a filter (-u, -s, -J)" : "")
              << "\n";
    return 2;
  }
  int code = 0;
  for (const std::string& text : ids) {
    Result<client::JobRef> ref = client::ParseJobRef(text);
    Result<json> job =
        ref ? rest.Post(ref->Path("/" + action), body) : Result<json>(ref.error());
    if (!job) {
      std::cerr << "Job <" << text << ">: ";
      code = std::max(code, Fail(job.error()));
      continue;
    }
    std::cout << "Job <" << ref->Text() << "> " << done_text << "\n";
  }
  return code;
}

void RegisterAction(CLI::App& app, int& exit_code, const std::string& verb, const std::string& help,
                    const std::string& done_text) {
  CLI::App* cmd = app.add_subcommand(verb, help);
  auto c = std::make_shared<ActionCommand>();
  AddConnectionFlags(cmd, c->connection);
  cmd->add_option("ids", c->ids, "job ids; ID[INDEX] or ID[FIRST-LAST] for array elements");
  if (verb == "cancel") {
    cmd->add_option("-u,--user", c->user,
                    "also every unfinished job of this user (`all`: everyone's; admins)");
    cmd->add_option("-s,--state", c->states,
                    "also your (or -u's) jobs in these states, e.g. PENDING,HELD");
    cmd->add_option("-J,--name", c->name, "also your (or -u's) unfinished jobs of this name");
    cmd->add_option("--signal", c->signal,
                    "send this signal (USR1, SIGTERM, 10...) to the running jobs instead; "
                    "they go on unless it ends them");
  }
  cmd->callback([c, verb, done_text, &exit_code] {
    exit_code = WithClient(c->connection, [&](client::RestClient& rest) {
      return RunAction(rest, *c, verb, done_text);
    });
  });
}

// ---- hosts / queues / limits ----

struct ListCommand {
  Connection connection;
  bool as_json = false;
};

void RegisterList(CLI::App& app, int& exit_code, const std::string& verb, const std::string& help,
                  std::string (*format)(const json&)) {
  CLI::App* cmd = app.add_subcommand(verb, help);
  auto c = std::make_shared<ListCommand>();
  AddConnectionFlags(cmd, c->connection);
  cmd->add_flag("--json", c->as_json, "print the API's JSON");
  cmd->callback([c, verb, format, &exit_code] {
    exit_code = WithClient(c->connection, [&](client::RestClient& rest) {
      Result<json> list = rest.Get("/v1/" + verb);
      if (!list) return Fail(list.error());
      std::cout << (c->as_json ? list->dump(2) + "\n" : client::PrintableText(format(*list)));
      return 0;
    });
  });
}

// ---- queue / host (admin) ----

struct AdminCommand {
  Connection connection;
  std::string action;
  std::vector<std::string> names;
};

// `kind` is "queue" or "host"; `done` maps each action to the past participle printed, e.g.
// `Queue <normal> is closed`. Every name is tried; the exit code is the worst.
void RegisterAdmin(CLI::App& app, int& exit_code, const std::string& kind, const std::string& help,
                   std::map<std::string, std::string> done) {
  CLI::App* cmd = app.add_subcommand(kind, help);
  auto c = std::make_shared<AdminCommand>();
  AddConnectionFlags(cmd, c->connection);
  std::vector<std::string> actions;
  for (const auto& [action, text] : done) actions.push_back(action);
  cmd->add_option("action", c->action, "what to do")->required()->check(CLI::IsMember(actions));
  cmd->add_option("names", c->names, kind + " names")->required();
  std::string title = kind;
  title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  cmd->callback([c, kind, title, done, &exit_code] {
    exit_code = WithClient(c->connection, [&](client::RestClient& rest) {
      int code = 0;
      for (const std::string& name : c->names) {
        Result<json> reply =
            rest.Post("/v1/" + kind + "s/" + QueryEscape(name) + "/" + c->action, json::object());
        if (!reply) {
          std::cerr << title << " <" << name << ">: ";
          code = std::max(code, Fail(reply.error()));
          continue;
        }
        std::cout << title << " <" << name << "> is " << done.at(c->action) << "\n";
      }
      return code;
    });
  });
}

}  // namespace

void RegisterClientCommands(CLI::App& app, int& exit_code, std::string_view only) {
  const auto wanted = [only](std::string_view verb) { return only.empty() || only == verb; };
  if (wanted("submit")) RegisterSubmit(app, exit_code);
  if (wanted("jobs")) RegisterJobs(app, exit_code);
  if (wanted("cancel")) {
    RegisterAction(app, exit_code, "cancel", "cancel jobs (bkill/scancel)", "is being cancelled");
  }
  if (wanted("hold")) {
    RegisterAction(app, exit_code, "hold", "hold pending jobs (bstop/scontrol hold)", "is held");
  }
  if (wanted("release")) {
    RegisterAction(app, exit_code, "release", "release held jobs", "is released");
  }
  if (wanted("hosts")) {
    RegisterList(app, exit_code, "hosts", "list hosts (bhosts/sinfo)", client::FormatHosts);
  }
  if (wanted("queues")) {
    RegisterList(app, exit_code, "queues", "list queues (bqueues)", client::FormatQueues);
  }
  if (wanted("limits")) {
    RegisterList(app, exit_code, "limits", "list limits (blimits)", client::FormatLimits);
  }
  if (wanted("queue")) {
    RegisterAdmin(app, exit_code, "queue",
                  "open/close (submissions) or activate/inactivate (dispatch) queues; admins only",
                  {{"open", "opened"},
                   {"close", "closed"},
                   {"activate", "activated"},
                   {"inactivate", "inactivated"}});
  }
  if (wanted("host")) {
    RegisterAdmin(app, exit_code, "host", "open/close hosts for new jobs; admins only",
                  {{"open", "opened"}, {"close", "closed"}});
  }
}

}  // namespace sluice::cli
