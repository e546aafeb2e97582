// JobsOutput: `sluice jobs` printed as the listing arrives (issue 45), one job object at a time,
// so the CLI's memory does not grow with the number of jobs: Add each job, then Finish once.
//
// The tables (plain, `-p`, `-o`) size their columns from the first kSizingRows rows, kept
// until then: a listing of at most that many rows prints exactly as format.h's functions
// print it; in a longer one a later cell wider than its column pushes the rest of its line
// right. `--json` prints the same text as the whole array's dump(2); `-l` prints each job as
// it comes; `-A` keeps only the arrays' objects (few) and prints their table at the end.
// Text from users goes through PrintableText (printable.h) as before; `--json` is JSON.
// Thread-safety: one output per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace sluice::client {

enum class JobsLayout { kTable, kPending, kFields, kLong, kArrays, kJson };

class JobsOutput {
 public:
  static constexpr size_t kSizingRows = 1000;
  virtual ~JobsOutput() = default;
  virtual void Add(const nlohmann::json& job) = 0;
  // Prints what is kept (or "No jobs found", ...). REQUIRES: called once, after the last Add.
  virtual void Finish() = 0;
};

// `fields`: kFields' columns (the `-o` list); `now`: the end of running jobs' elapsed times.
std::unique_ptr<JobsOutput> NewJobsOutput(std::ostream& out, JobsLayout layout, int64_t now,
                                          std::vector<std::string> fields = {});

}  // namespace sluice::client
