// StringLog: a simulation's decision log (sim/decision_log.h) written into memory, so a test
// can compare two runs' bytes. Not thread-safe; one per run.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/decision_log.h"

namespace sluice::testing {

class StringLog {
 public:
  StringLog() : file_(open_memstream(&data_, &size_)), log_(file_) {}
  ~StringLog() {
    std::fclose(file_);
    std::free(data_);
  }
  StringLog(const StringLog&) = delete;
  StringLog& operator=(const StringLog&) = delete;

  sim::DecisionLog* log() { return &log_; }
  std::string Text() {
    log_.Flush();
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
  sim::DecisionLog log_;
};

}  // namespace sluice::testing
