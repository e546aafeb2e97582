// bmod, brequeue and bpeek (R-COMPAT-1) in the forms docs/compat.md lists, printing what LSF
// 10.1 prints:
//   bmod [OPTIONS] JOB_ID   (client/compat/bmod_request.h) -> PATCH /v1/jobs/ID;
//     `Parameters of job <N> are being changed`.
//   brequeue JOB_ID...      -> POST /v1/jobs/ID/requeue; `Job <N> is being requeued`.
//   bpeek [-f] [JOB_ID]     -> GET /v1/jobs/ID/peek; `<< output from stdout >>` and the
//     output so far (at most its newest 64 KiB); -f then follows it until the job ends. Without
//     a job id: the caller's most recently started running job.
// Failures exit 255 as LSF's commands do; an unknown job is `Job <N>: No matching job found`.
#include <iostream>

#include "cli/commands.h"
#include "cli/compat/compat_commands.h"
#include "cli/compat/job_lookup.h"
#include "client/array_format.h"
#include "client/compat/bmod_request.h"

namespace sluice::cli::compat {
namespace {

using nlohmann::json;

int Usage(std::string_view program, const std::string& message) {
  return LsfUsage(program, message);
}

// A refused change of job `text`, as LSF words the common ones.
int JobFailure(const std::string& text, const Status& error) {
  if (error.code() == StatusCode::kNotFound) {
    std::cerr << "Job <" << text << ">: No matching job found\n";
  } else {
    std::cerr << "Job <" << text << ">: " << error.message() << "\n";
  }
  return kLsfFailure;
}

// The caller's running job that started last, for bpeek without a job id.
Result<std::string> NewestRunningJob(client::RestClient& rest) {
  Result<std::vector<client::compat::CompatJob>> jobs =
      LiveJobs(rest, "user=" + CurrentUser() + "&state=RUNNING");
  if (!jobs) return jobs.error();
  const client::compat::CompatJob* newest = nullptr;
  for (const client::compat::CompatJob& job : *jobs) {
    if (newest == nullptr || job.start_time >= newest->start_time) newest = &job;
  }
  if (newest == nullptr) return Status(StatusCode::kNotFound, "No unfinished job found");
  return std::to_string(newest->id);
}

}  // namespace

int Bmod(Args args) {
  Result<client::compat::BmodCommandLine> line = client::compat::ParseBmodArgs(args);
  if (!line) return Usage("bmod", line.error().message());
  Result<json> body = client::BuildModifyBody(line->flags, Now());
  if (!body) return Usage("bmod", body.error().message());
  Result<client::JobRef> ref = client::ParseJobRef(line->job);
  if (!ref) return JobFailure(line->job, Status(StatusCode::kNotFound, ""));
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Usage("bmod", rest.error().message());
  Result<json> changed = (*rest)->Patch(ref->Path(), *body);
  if (!changed) return JobFailure(line->job, changed.error());
  std::cout << "Parameters of job <" << line->job << "> are being changed\n";
  return 0;
}

int Brequeue(Args args) {
  std::vector<std::string> ids;
  for (const std::string& arg : args) {
    if (arg.starts_with("-")) return Usage("brequeue", arg + ": not supported by Sluice (only job ids)");
    ids.push_back(arg);
  }
  return ActOnLsfJobs("brequeue", ids, "requeue", "is being requeued", nullptr);
}

int Bpeek(Args args) {
  bool follow = false;
  std::string text;
  for (const std::string& arg : args) {
    if (arg == "-f") {
      follow = true;
    } else if (arg.starts_with("-")) {
      return Usage("bpeek", arg + ": not supported by Sluice (bpeek [-f] [job_ID])");
    } else if (!text.empty()) {
      return Usage("bpeek", "one job id only");
    } else {
      text = arg;
    }
  }
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Usage("bpeek", rest.error().message());
  if (text.empty()) {
    Result<std::string> newest = NewestRunningJob(**rest);
    if (!newest) return Usage("bpeek", newest.error().message());
    text = *newest;
  }
  Result<client::JobRef> ref = client::ParseJobRef(text);
  if (!ref || ref->index.find('-') != std::string::npos) {
    return JobFailure(text, Status(StatusCode::kNotFound, ""));
  }
  const std::string path = ref->Path("/peek") + (ref->index.empty() ? "?" : "&");
  Result<json> peek = (*rest)->Get(path + "offset=0");
  if (!peek && peek.error().code() == StatusCode::kFailedPrecondition) {
    std::cerr << "Job <" << text << "> : Not a running job\n";
    return kLsfFailure;
  }
  if (!peek) return JobFailure(text, peek.error());
  std::cout << "<< output from stdout >>\n" << peek->value("text", "") << std::flush;
  if (!follow) return 0;
  Status followed = FollowPeek(**rest, path, peek->value("size", int64_t{0}));
  return followed.ok() ? 0 : JobFailure(text, followed);
}

}  // namespace sluice::cli::compat
