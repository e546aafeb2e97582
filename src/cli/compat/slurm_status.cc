// squeue, sacct, scontrol show job|jobid|config and scancel (R-COMPAT-1), in the forms
// docs/compat.md lists, printing what Slurm 22.05 prints.
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "cli/compat/compat_commands.h"
#include "cli/compat/job_lookup.h"
#include "client/compat/options.h"
#include "client/compat/slurm_show.h"
#include "wire/signal_name.h"

namespace sluice::cli::compat {
namespace {

using client::compat::CompatJob;
using client::compat::OptionSpec;
using client::compat::OptionStyle;
using client::compat::ParsedArgs;

int Error(std::string_view program, const std::string& message) {
  std::cerr << program << ": error: " << message << "\n";
  return 1;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The jobs of an id list ("12,13_2"); unknown ids are left out, as squeue and sacct do.
Result<std::vector<CompatJob>> JobsByIds(client::RestClient& rest,
                                         const std::vector<std::string>& ids) {
  std::vector<CompatJob> out;
  for (const std::string& text : ids) {
    Result<int64_t> id = ParseJobId(text);
    if (!id) return id.error();
    Result<CompatJob> job = FindJob(rest, *id);
    if (job) {
      out.push_back(std::move(*job));
    } else if (job.error().code() != StatusCode::kNotFound) {
      return job.error();
    }
  }
  return out;
}

bool Waiting(const CompatJob& job) { return !job.Ended(); }

// squeue -t STATES (codes or names, `all`); without -t, the jobs that have not ended.
bool SqueueShows(const std::string& states, const CompatJob& job) {
  if (states.empty()) return Waiting(job);
  if (states == "all" || states == "ALL") return true;
  return states.find(ShortCode(SlurmStateOf(job))) != std::string::npos ||
         states.find(ToString(SlurmStateOf(job))) != std::string::npos;
}

// ---- squeue ----

enum SqueueOption { kNoHeader, kFormat, kJobs, kUser, kStates, kPartition, kMe, kAll };
constexpr OptionSpec kSqueueOptions[] = {
    {"-h", "--noheader", false, kNoHeader}, {"-o", "--format", true, kFormat},
    {"-j", "--jobs", true, kJobs},          {"-u", "--user", true, kUser},
    {"-t", "--states", true, kStates},      {"-p", "--partition", true, kPartition},
    {"", "--me", false, kMe},               {"-a", "--all", false, kAll},
};

}  // namespace

int Squeue(Args args) {
  Result<ParsedArgs> parsed =
      client::compat::ParseOptions(args, kSqueueOptions, OptionStyle::kGetopt, false);
  if (!parsed) return Error("squeue", parsed.error().message());
  bool header = true;
  std::string format(client::compat::kSqueueDefaultFormat);
  std::vector<std::string> ids;
  std::string query;
  std::string states;
  for (const auto& option : parsed->options) {
    switch (option.id) {
      case kNoHeader:
        header = false;
        break;
      case kFormat:
        format = option.value;
        break;
      case kJobs:
        for (std::string& id : SplitList(option.value)) ids.push_back(std::move(id));
        break;
      case kUser:
        query += "&user=" + option.value;
        break;
      case kMe:
        query += "&user=" + CurrentUser();
        break;
      case kPartition:
        query += "&queue=" + option.value;
        break;
      case kStates:
        states = option.value;
        break;
      default:
        break;
    }
  }
  if (!parsed->operands.empty()) return Error("squeue", "unrecognized argument " + parsed->operands[0]);
  Result<std::vector<client::compat::SqueueField>> fields =
      client::compat::ParseSqueueFormat(format);
  if (!fields) return Error("squeue", fields.error().message());
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Error("squeue", rest.error().message());
  const int64_t now = Now();
  // Lines go out as the listing arrives (issue 45); the header before the first of them.
  bool started = false;
  const auto print = [&](const CompatJob& job) {
    if (!started && header) std::cout << client::compat::SqueueHeader(*fields);
    started = true;
    if (SqueueShows(states, job)) std::cout << client::compat::SqueueLine(*fields, job, now);
  };
  Status listed = Status::Ok();
  if (ids.empty()) {
    listed = ForEachLiveJob(**rest, query.empty() ? "" : query.substr(1), print);
  } else if (Result<std::vector<CompatJob>> jobs = JobsByIds(**rest, ids); jobs) {
    for (const CompatJob& job : *jobs) print(job);
  } else {
    listed = jobs.error();
  }
  if (!listed.ok() && !started) return Error("squeue", listed.message());
  if (!started && header) std::cout << client::compat::SqueueHeader(*fields);
  std::cout.flush();
  return listed.ok() ? 0 : Error("squeue", listed.message());
}

namespace {

// ---- sacct ----

enum SacctOption { kSNoHeader, kSParsable, kSParsable2, kSFormat, kSJobs, kSUser, kSStart,
                   kSEnd, kSAllUsers, kSAllocations, kSBrief };
constexpr OptionSpec kSacctOptions[] = {
    {"-n", "--noheader", false, kSNoHeader},   {"-P", "--parsable2", false, kSParsable2},
    {"-p", "--parsable", false, kSParsable},   {"-o", "--format", true, kSFormat},
    {"-j", "--jobs", true, kSJobs},            {"-u", "--user", true, kSUser},
    {"-S", "--starttime", true, kSStart},      {"-E", "--endtime", true, kSEnd},
    {"-a", "--allusers", false, kSAllUsers},   {"-X", "--allocations", false, kSAllocations},
    {"-b", "--brief", false, kSBrief},
};

// sacct's jobs to `print`: those of `ids`, or without ids the user's jobs still in the
// controller, printed as they arrive (issue 45), then those ended since midnight that the
// controller no longer holds (a history that cannot be read leaves them out, as before).
Status SacctJobs(client::RestClient& rest, const std::vector<std::string>& ids,
                 const std::string& user, const std::function<void(const CompatJob&)>& print) {
  if (!ids.empty()) {
    Result<std::vector<CompatJob>> jobs = JobsByIds(rest, ids);
    if (!jobs) return jobs.error();
    for (const CompatJob& job : *jobs) print(job);
    return Status::Ok();
  }
  std::set<int64_t> live;
  SLUICE_RETURN_IF_ERROR(ForEachLiveJob(rest, "user=" + user, [&](const CompatJob& job) {
    live.insert(job.id);  // an element's id is its array's (job_lookup.h), as before
    print(job);
  }));
  const int64_t midnight = Now() - Now() % 86400;
  Result<std::vector<CompatJob>> ended =
      HistoryJobs(rest, "user=" + user + "&since=" + std::to_string(midnight));
  if (!ended) return Status::Ok();
  for (const CompatJob& job : *ended) {
    if (live.count(job.id) == 0) print(job);
  }
  return Status::Ok();
}

}  // namespace

int Sacct(Args args) {
  Result<ParsedArgs> parsed =
      client::compat::ParseOptions(args, kSacctOptions, OptionStyle::kGetopt, false);
  if (!parsed) return Error("sacct", parsed.error().message());
  bool header = true;
  bool parsable = false;
  bool trailing_bar = false;  // -p ends each line with `|`, -P does not
  std::string format = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
  std::vector<std::string> ids;
  std::string user = CurrentUser();
  for (const auto& option : parsed->options) {
    switch (option.id) {
      case kSNoHeader:
        header = false;
        break;
      case kSParsable:
        parsable = trailing_bar = true;
        break;
      case kSParsable2:
        parsable = true;
        break;
      case kSFormat:
        format = option.value;
        break;
      case kSBrief:
        format = "JobID,State,ExitCode";
        break;
      case kSJobs:
        for (std::string& id : SplitList(option.value)) ids.push_back(std::move(id));
        break;
      case kSUser:
        user = option.value;
        break;
      case kSAllUsers:
        user = "all";
        break;
      default:  // -S/-E: the jobs asked by id are shown whatever their times; -X: no steps
        break;
    }
  }
  Result<std::vector<client::compat::SacctField>> fields =
      client::compat::ParseSacctFields(format);
  if (!fields) return Error("sacct", fields.error().message());
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Error("sacct", rest.error().message());
  const int64_t now = Now();
  std::string head = header ? client::compat::SacctHeader(*fields, parsable) : "";
  if (header && trailing_bar) head.insert(head.find('\n'), "|");
  const auto print = [&](const CompatJob& job) {
    std::string line = client::compat::SacctLine(*fields, job, parsable, now);
    if (trailing_bar) line.insert(line.size() - 1, "|");
    std::cout << head << line;
    head.clear();  // printed once, before the first line
  };
  const Status listed = SacctJobs(**rest, ids, user, print);
  if (!listed.ok()) return Error("sacct", listed.message());
  std::cout << head;  // no line came: the header alone
  return 0;
}

// ---- scontrol ----

namespace {

// show reservation[s], create reservation[s], delete ReservationName=, update ReservationName=.
bool IsReservationForm(const std::vector<std::string>& words) {
  if (words.size() < 2) return false;
  const bool reservation = words[1] == "reservation" || words[1] == "reservations" ||
                           words[1] == "res";
  if (words[0] == "show" || words[0] == "create") return reservation;
  std::string key = words[1].substr(0, words[1].find('='));
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return (words[0] == "delete" || words[0] == "update") &&
         (key == "reservationname" || key == "reservation");
}

}  // namespace

int Scontrol(Args args) {
  bool details = false;
  std::vector<std::string> words;
  for (const std::string& arg : args) {
    if (arg == "-d" || arg == "--details") {
      details = true;  // one -d adds the allocation's detail lines too
    } else if (arg == "-dd") {
      details = true;
    } else if (arg.starts_with("-")) {
      std::cerr << "scontrol: unrecognized option '" << arg << "'\n";
      return 1;
    } else {
      words.push_back(arg);
    }
  }
  if (words.size() >= 2 && words[0] == "show" && words[1] == "config") {
    return ScontrolShowConfig();
  }
  if (IsReservationForm(words)) return ScontrolReservation(words);
  if (words.size() < 2 || words[0] != "show" || (words[1] != "job" && words[1] != "jobid")) {
    std::cerr << "scontrol: error: only `scontrol show job[id] [ID]`, `scontrol show config` "
                 "and the reservation forms are supported by Sluice\n";
    return 1;
  }
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Error("scontrol", rest.error().message());
  const int64_t now = Now();
  if (words.size() == 2) {
    int64_t shown = 0;  // each as the listing arrives (issue 45)
    const Status listed = ForEachLiveJob(**rest, "", [&](const CompatJob& job) {
      std::cout << client::compat::ScontrolShowJob(job, details, now);
      ++shown;
    });
    if (!listed.ok()) return Error("scontrol", listed.message());
    if (shown == 0) std::cout << "No jobs in the system\n";
    return 0;
  }
  Result<int64_t> id = ParseJobId(words[2]);
  Result<CompatJob> job = id ? FindJob(**rest, *id) : Result<CompatJob>(id.error());
  if (!job) {
    if (job.error().code() == StatusCode::kNotFound ||
        job.error().code() == StatusCode::kInvalidArgument) {
      std::cerr << "slurm_load_jobs error: Invalid job id specified\n";
      return 1;
    }
    return Error("scontrol", job.error().message());
  }
  std::cout << client::compat::ScontrolShowJob(*job, details, now);
  return 0;
}

// ---- scancel ----

int Scancel(Args args) {
  std::vector<std::string> ids;
  std::optional<std::string> signal;  // -s/--signal: sent to the running jobs instead
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-s" || arg == "--signal") {
      if (i + 1 == args.size()) return Error("scancel", "option " + arg + " requires a signal");
      signal = args[++i];
    } else if (arg.starts_with("--signal=") || (arg.starts_with("-s") && arg.size() > 2)) {
      signal = arg.substr(arg.starts_with("--") ? 9 : 2);
    } else if (arg.starts_with("-")) {
      std::cerr << "scancel: error: option " << arg
                << " is not supported by Sluice (only job ids and -s/--signal)\n";
      return 1;
    } else {
      ids.push_back(arg);
    }
  }
  if (ids.empty()) return Error("scancel", "No job identification provided");
  nlohmann::json body = nlohmann::json::object();
  if (signal) {
    Result<std::string> name = wire::CanonicalSignal(*signal);
    if (!name) return Error("scancel", "Invalid job signal: " + *signal);
    body["signal"] = *name;
  }
  const std::string action = signal ? "/signal" : "/cancel";
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Error("scancel", rest.error().message());
  int code = 0;
  for (const std::string& text : ids) {
    Result<int64_t> id = ParseJobId(text);
    if (!id) {
      code = Error("scancel", "Invalid job id " + text);
      continue;
    }
    Result<nlohmann::json> done = (*rest)->Post("/v1/jobs/" + std::to_string(*id) + action, body);
    if (done) continue;
    if (done.error().code() == StatusCode::kFailedPrecondition && signal) {
      code = Error("scancel", "Kill job error on job id " + text + ": Job is not running");
    } else if (done.error().code() == StatusCode::kFailedPrecondition) {
      code = Error("scancel", "Kill job error on job id " + text +
                                  ": Job/step already completing or completed");
    } else if (done.error().code() == StatusCode::kNotFound) {
      code = Error("scancel", "Kill job error on job id " + text + ": Invalid job id specified");
    } else {
      code = Error("scancel", "Kill job error on job id " + text + ": " + done.error().message());
    }
  }
  return code;
}

}  // namespace sluice::cli::compat
