#include "cli/compat/submission.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/compat/job_lookup.h"
#include "cli/submit_script.h"

namespace sluice::cli::compat {

using nlohmann::json;

Result<std::string> ReadJobScript(const std::string& path) {
  if (path.empty()) return ReadScript(std::cin, "stdin");
  std::ifstream file(path, std::ios::binary);
  if (!file) return InvalidArgument("Unable to open file " + path);
  return ReadScript(file, path);
}

Result<Submitted> SubmitJob(client::RestClient& rest, client::SubmitFlags flags) {
  std::error_code error;
  const std::string submit_dir = std::filesystem::current_path(error).string();
  flags.umask = CallerUmask();  // the job's files get the submitter's mode, as Slurm and LSF do
  Result<json> body = client::BuildSubmitBody(flags, submit_dir, Now());
  if (!body) return body.error();
  Result<json> reply = rest.Post("/v1/jobs", *body);
  if (!reply) return reply.error();
  const json id = reply->value("id", json());
  if (!id.is_number_integer()) return Internal("the controller answered without a job id");
  Submitted out{.id = id.get<int64_t>(), .queue = flags.queue};
  if (out.queue.empty()) {
    Result<json> job = rest.Get("/v1/jobs/" + id.dump());
    if (job) out.queue = job->value("queue", "");
  }
  return out;
}

}  // namespace sluice::cli::compat
