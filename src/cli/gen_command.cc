// `sluice gen`: writes a synthetic workload (Lublin-Feitelson model) as JSONL or SWF.
//
// Implements R-SIM-5. Usage:
//   sluice gen [--jobs N] [--procs P] [--load L] [--seed S] [--format jsonl|swf] [-o FILE]
// The output goes to FILE, or to stdout without -o. The same flags give the same bytes.
// Exit codes: 0 ok, 1 the output file cannot be written, 2 a flag value is out of range.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "sim/lublin_generator.h"
#include "sim/workload_writer.h"

namespace sluice::cli {
namespace {

struct GenFlags {
  sim::LublinOptions model;
  std::string format = "jsonl";
  std::string output;  // empty: stdout
};

// An error message for the first out-of-range flag, or "" when all are valid.
std::string CheckFlags(const GenFlags& flags) {
  if (flags.model.jobs < 0) return "--jobs: expected an integer >= 0";
  if (flags.model.procs < 1) return "--procs: expected an integer >= 1";
  if (!(flags.model.load >= sim::kMinLoad && flags.model.load <= sim::kMaxLoad)) {
    return "--load: expected a number in [1e-06, 1e+06]";
  }
  if (flags.format != "jsonl" && flags.format != "swf") {
    return "--format: expected jsonl or swf";
  }
  return "";
}

bool WriteOutput(const std::string& path, const std::string& text) {
  std::FILE* file = path.empty() ? stdout : std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok = (path.empty() ? std::fflush(file) : std::fclose(file)) == 0 && ok;
  return ok;
}

int RunGen(const GenFlags& flags) {
  if (std::string error = CheckFlags(flags); !error.empty()) {
    std::cerr << "sluice gen: " << error << "\n";
    return 2;
  }
  const sim::Workload workload = sim::GenerateLublin(flags.model);
  const std::string text =
      flags.format == "swf" ? sim::WriteSwf(workload) : sim::WriteJsonl(workload);
  if (!WriteOutput(flags.output, text)) {
    std::cerr << "sluice gen: " << (flags.output.empty() ? "stdout" : flags.output)
              << ": cannot write\n";
    return 1;
  }
  return 0;
}

}  // namespace

void RegisterGenCommand(CLI::App& app, int& exit_code) {
  CLI::App* gen = app.add_subcommand(
      "gen", "write a synthetic workload (Lublin-Feitelson model of rigid batch jobs)");
  auto flags = std::make_shared<GenFlags>();
  gen->add_option("--jobs", flags->model.jobs, "number of jobs")->capture_default_str();
  gen->add_option("--procs", flags->model.procs, "machine size in processors (slots)")
      ->capture_default_str();
  gen->add_option("--load", flags->model.load,
                  "offered load: sum(runtime x size) / (procs x submit span)")
      ->capture_default_str();
  gen->add_option("--seed", flags->model.seed, "random seed")->capture_default_str();
  gen->add_option("--format", flags->format, "jsonl or swf")->capture_default_str();
  gen->add_option("-o,--output", flags->output, "output file (default: stdout)");
  gen->callback([flags, &exit_code] { exit_code = RunGen(*flags); });
}

}  // namespace sluice::cli
