// bqueues, bhosts, bparams -a, lsadmin showconf lim and lsid (R-COMPAT-1): the cluster as LSF
// describes it. Toil reads bparams/lsadmin for LSF_UNIT_FOR_LIMITS and
// RESOURCE_RESERVE_PER_TASK, and lsid's version to use `bjobs -json`.
#include <cstdio>
#include <iostream>

#include "cli/compat/compat_commands.h"
#include "cli/compat/job_lookup.h"

namespace sluice::cli::compat {
namespace {

using nlohmann::json;

// Memory in Sluice is in megabytes, reserved per task (rusage is per task).
constexpr char kParameters[] =
    "LSF_UNIT_FOR_LIMITS = MB\n"
    "RESOURCE_RESERVE_PER_TASK = Y\n";

std::string Cell(const std::string& text, int width, bool right = false) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, right ? "%*s" : "%-*s", width, text.c_str());
  return buffer;
}

Result<json> GetList(const std::string& path) {
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return rest.error();
  return (*rest)->Get(path);
}

}  // namespace

int Bparams(Args args) {
  if (!args.empty() && args[0] != "-a" && args[0] != "-l") {
    std::cerr << "bparams: " << args[0] << ": not supported by Sluice (-a or -l)\n";
    return kLsfFailure;
  }
  std::cout << "System default parameters (Sluice):\n" << kParameters;
  return 0;
}

int Lsadmin(Args args) {
  if (args.size() < 2 || args[0] != "showconf" || args[1] != "lim") {
    std::cerr << "lsadmin: only `lsadmin showconf lim` is supported by Sluice\n";
    return kLsfFailure;
  }
  std::cout << kParameters;
  return 0;
}

int Lsid(Args) {
  // The version is LSF's whose output Sluice prints (bjobs -json needs 10.1.0.2 or later).
  std::cout << "IBM Spectrum LSF Standard 10.1.0.13, Sluice drop-in commands\n\n"
            << "My cluster name is sluice\n"
            << "My master name is localhost\n";
  return 0;
}

int Bqueues(Args args) {
  if (!args.empty()) {
    std::cerr << "bqueues: options are not supported by Sluice\n";
    return kLsfFailure;
  }
  Result<json> queues = GetList("/v1/queues");
  if (!queues) {
    std::cerr << "bqueues: " << queues.error().message() << "\n";
    return kLsfFailure;
  }
  std::string out =
      "QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP \n";
  for (const json& q : *queues) {
    const int64_t pend = q.value("pending", int64_t{0}) + q.value("held", int64_t{0});
    const int64_t run = q.value("running", int64_t{0});
    const std::string status = std::string(q.value("open", true) ? "Open" : "Closed") + ":" +
                               (q.value("active", true) ? "Active" : "Inact");
    out += Cell(q.value("name", ""), 15) + Cell(std::to_string(q.value("priority", 0)), 5, true) +
           "  " + Cell(status, 16) + Cell("-", 3, true) + Cell("-", 5, true) +
           Cell("-", 5, true) + Cell("-", 5, true) + Cell(std::to_string(pend + run), 6, true) +
           Cell(std::to_string(pend), 6, true) + Cell(std::to_string(run), 6, true) +
           Cell("0", 6, true) + "\n";
  }
  std::cout << out;
  return 0;
}

int Bhosts(Args args) {
  if (!args.empty()) {
    std::cerr << "bhosts: options are not supported by Sluice\n";
    return kLsfFailure;
  }
  Result<json> hosts = GetList("/v1/hosts");
  if (!hosts) {
    std::cerr << "bhosts: " << hosts.error().message() << "\n";
    return kLsfFailure;
  }
  std::string out =
      "HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV \n";
  for (const json& h : *hosts) {
    std::string status = h.value("state", "");
    if (status == "closed" || status == "draining") status = "closed";
    if (status == "unavail") status = "unavail";
    const int64_t used = h.value("used_slots", int64_t{0});
    const int64_t slots = h.value("slots", int64_t{0});
    if (status == "ok" && used >= slots && slots > 0) status = "closed";  // LSF: full is closed
    out += Cell(h.value("name", ""), 19) + Cell(status, 11) + Cell("-", 6, true) +
           Cell(std::to_string(slots), 7, true) + Cell(std::to_string(used), 7, true) +
           Cell(std::to_string(used), 7, true) + Cell("0", 7, true) + Cell("0", 7, true) +
           Cell("0", 7, true) + "\n";
  }
  std::cout << out;
  return 0;
}

}  // namespace sluice::cli::compat
