// bjobs, bkill and bhist (R-COMPAT-1) in the forms docs/compat.md lists, printing what LSF
// 10.1 prints. Every option is one word and its value the next (LSF's habit).
#include <iostream>
#include <optional>

#include "cli/compat/compat_commands.h"
#include "cli/compat/job_lookup.h"
#include "client/compat/lsf_show.h"
#include "client/compat/options.h"
#include "client/history_format.h"
#include "wire/signal_name.h"

namespace sluice::cli::compat {
namespace {

using client::compat::CompatJob;
using client::compat::OptionSpec;
using client::compat::OptionStyle;
using client::compat::ParsedArgs;

int Usage(std::string_view program, const std::string& message) {
  return LsfUsage(program, message);
}

// The jobs named by `ids`; an unknown one is reported as LSF does and sets `code`.
std::vector<CompatJob> JobsByIds(client::RestClient& rest, const std::vector<std::string>& ids,
                                 int& code) {
  std::vector<CompatJob> out;
  for (const std::string& text : ids) {
    Result<int64_t> id = ParseJobId(text);
    Result<CompatJob> job = id ? FindJob(rest, *id) : Result<CompatJob>(id.error());
    if (job) {
      out.push_back(std::move(*job));
      continue;
    }
    code = kLsfFailure;
    if (job.error().code() == StatusCode::kNotFound ||
        job.error().code() == StatusCode::kInvalidArgument) {
      std::cerr << "Job <" << text << "> is not found\n";
    } else {
      std::cerr << job.error().message() << "\n";
    }
  }
  return out;
}

enum BjobsOption { kWide, kAll, kLong, kUser, kQueue, kJson, kFormat, kDone, kPend, kRun };
constexpr OptionSpec kBjobsOptions[] = {
    {"-w", "", false, kWide},  {"-a", "", false, kAll},    {"-l", "", false, kLong},
    {"-u", "", true, kUser},   {"-q", "", true, kQueue},   {"-json", "", false, kJson},
    {"-o", "", true, kFormat}, {"-d", "", false, kDone},   {"-p", "", false, kPend},
    {"-r", "", false, kRun},
};

struct BjobsRequest {
  bool wide = false, all = false, long_form = false, json = false;
  bool done_only = false, pend_only = false, run_only = false;
  std::string user, queue, format;
};

bool Shown(const BjobsRequest& r, const CompatJob& job, bool by_id) {
  const client::compat::LsfStat stat = client::compat::LsfStatOf(job);
  const bool ended = job.Ended();
  if (r.done_only) return ended;
  if (r.pend_only) return stat == client::compat::LsfStat::kPend || stat == client::compat::LsfStat::kPsusp;
  if (r.run_only) return stat == client::compat::LsfStat::kRun;
  return by_id || r.all || !ended;  // LSF lists unfinished jobs unless -a or asked by id
}

std::string Print(const BjobsRequest& r, const std::vector<CompatJob>& jobs, int64_t now) {
  if (!r.format.empty()) {
    Result<client::compat::BjobsFormat> format = client::compat::ParseBjobsFormat(r.format);
    if (!format) return "";
    return r.json ? client::compat::BjobsJson(*format, jobs, now)
                  : client::compat::BjobsColumns(*format, jobs, now);
  }
  std::string out;
  if (r.long_form) {
    for (const CompatJob& job : jobs) out += client::compat::BjobsLong(job);
    return out;
  }
  out = client::compat::BjobsHeader();
  for (const CompatJob& job : jobs) out += client::compat::BjobsLine(job, r.wide);
  return out;
}

// bjobs without ids: the live jobs printed as the listing arrives (issue 45), the header
// once before the first; except -json, whose record count comes before the records.
int BjobsListing(client::RestClient& rest, const BjobsRequest& r) {
  const std::string user = r.user.empty() ? CurrentUser() : r.user;
  const std::string query = "user=" + user + (r.queue.empty() ? "" : "&queue=" + r.queue);
  const int64_t now = Now();
  if (r.json) {
    Result<std::vector<CompatJob>> live = LiveJobs(rest, query);
    if (!live) return Usage("bjobs", live.error().message());
    std::erase_if(*live, [&](const CompatJob& job) { return !Shown(r, job, false); });
    std::cout << Print(r, *live, now);
    return 0;
  }
  int64_t shown = 0;
  const Status listed = ForEachLiveJob(rest, query, [&](const CompatJob& job) {
    if (!Shown(r, job, false)) return;
    std::string text = Print(r, {job}, now);
    if (shown++ > 0 && !r.long_form) text.erase(0, text.find('\n') + 1);  // the header
    std::cout << text;
  });
  if (!listed.ok()) return Usage("bjobs", listed.message());
  if (shown == 0 && r.format.empty()) {
    std::cerr << "No unfinished job found\n";
  } else if (shown == 0) {
    std::cout << Print(r, {}, now);  // -o: the header alone
  }
  return 0;
}

}  // namespace

int Bjobs(Args args) {
  Result<ParsedArgs> parsed =
      client::compat::ParseOptions(args, kBjobsOptions, OptionStyle::kLsf, false);
  if (!parsed) return Usage("bjobs", parsed.error().message());
  BjobsRequest r;
  for (const auto& o : parsed->options) {
    switch (o.id) {
      case kWide: r.wide = true; break;
      case kAll: r.all = true; break;
      case kLong: r.long_form = true; break;
      case kJson: r.json = true; break;
      case kDone: r.done_only = true; break;
      case kPend: r.pend_only = true; break;
      case kRun: r.run_only = true; break;
      case kUser: r.user = o.value; break;
      case kQueue: r.queue = o.value; break;
      case kFormat: r.format = o.value; break;
      default: break;
    }
  }
  if (r.json && r.format.empty()) return Usage("bjobs", "-json requires -o");
  if (!r.format.empty()) {
    Result<client::compat::BjobsFormat> format = client::compat::ParseBjobsFormat(r.format);
    if (!format) return Usage("bjobs", format.error().message());
  }
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Usage("bjobs", rest.error().message());
  if (parsed->operands.empty()) return BjobsListing(**rest, r);
  int code = 0;
  std::vector<CompatJob> jobs = JobsByIds(**rest, parsed->operands, code);
  std::erase_if(jobs, [&](const CompatJob& job) { return !Shown(r, job, true); });
  std::cout << Print(r, jobs, Now());
  return code;
}

int Bkill(Args args) {
  std::vector<std::string> ids;
  std::optional<std::string> signal;  // -s SIG: sent to the running jobs instead
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-s") {
      if (i + 1 == args.size()) return Usage("bkill", "-s: a signal is required");
      signal = args[++i];
    } else if (args[i].starts_with("-")) {
      return Usage("bkill", args[i] + ": not supported by Sluice (only job ids and -s signal)");
    } else {
      ids.push_back(args[i]);
    }
  }
  if (!signal) {
    return ActOnLsfJobs("bkill", ids, "cancel", "is being terminated", [](StatusCode code) {
      return std::string(code == StatusCode::kFailedPrecondition ? "Job has already finished"
                                                                 : "");
    });
  }
  Result<std::string> name = wire::CanonicalSignal(*signal);
  if (!name) return Usage("bkill", name.error().message());
  return ActOnLsfJobs(
      "bkill", ids, "signal", "is being signaled",
      [](StatusCode code) {
        return std::string(code == StatusCode::kFailedPrecondition ? "Job is not running" : "");
      },
      {{"signal", *name}});
}

// bhist -l IDS: each job's timeline (GET /v1/history/ID; issue 47.6).
int BhistLong(client::RestClient& rest, const std::vector<std::string>& ids) {
  int code = 0;
  for (const std::string& text : ids) {
    Result<int64_t> id = ParseJobId(text);
    Result<nlohmann::json> reply =
        id ? rest.Get("/v1/history/" + std::to_string(*id)) : Result<nlohmann::json>(id.error());
    if (reply) {
      std::cout << client::FormatJobTimeline(*reply);
      continue;
    }
    code = kLsfFailure;
    std::cerr << (reply.error().code() == StatusCode::kNotFound ||
                          reply.error().code() == StatusCode::kInvalidArgument
                      ? "Job <" + text + "> is not found"
                      : reply.error().message())
              << "\n";
  }
  return code;
}

int Bhist(Args args) {
  std::vector<std::string> ids;
  bool long_format = false;
  for (const std::string& arg : args) {
    if (arg == "-a") continue;  // finished and unfinished: what bhist shows here anyway
    if (arg == "-l") {
      long_format = true;
      continue;
    }
    if (arg.starts_with("-")) return Usage("bhist", arg + ": not supported by Sluice");
    ids.push_back(arg);
  }
  if (long_format && ids.empty()) return Usage("bhist", "-l: name the jobs (bhist -l ID...)");
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Usage("bhist", rest.error().message());
  if (long_format) return BhistLong(**rest, ids);
  int code = 0;
  const int64_t now = Now();
  int64_t shown = 0;  // lines go out as the listing arrives (issue 45), the header first
  const auto print = [&](const CompatJob& job) {
    std::cout << (shown++ == 0 ? client::compat::BhistHeader() : "")
              << client::compat::BhistLine(job, now);
  };
  if (!ids.empty()) {
    for (const CompatJob& job : JobsByIds(**rest, ids, code)) print(job);
    return code;
  }
  const Status listed = ForEachLiveJob(**rest, "user=" + CurrentUser(), print);
  if (!listed.ok()) return Usage("bhist", listed.message());
  if (shown == 0) std::cerr << "No matching job found\n";
  return 0;
}

}  // namespace sluice::cli::compat
