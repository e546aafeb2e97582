// /metrics (R-SRV-4): the Prometheus text exposition format 0.0.4, built on prometheus-cpp's
// core (a registry of gauge, counter and histogram families and its text serializer).
//
// The controller computes every value at scrape time from its state, so each scrape fills a
// fresh PromWriter: a family, then its samples, in the order they should appear. The text
// keeps that order — families, samples within a family, and labels within a sample as the
// caller wrote them (prometheus-cpp keys labels by name; the writer restores the order), so
// `sluice_jobs{state="PENDING",queue="normal"}` reads as before.
// A histogram is written as its exposition samples: `NAME_bucket` with an `le` label (the
// cumulative count up to that bound, `+Inf` last), `NAME_sum` and `NAME_count`.
// Thread-safety: one writer per scrape; not shared.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sluice::server {

class PromWriter {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  PromWriter();
  ~PromWriter();
  PromWriter(const PromWriter&) = delete;
  PromWriter& operator=(const PromWriter&) = delete;

  // Starts a family; `type` is gauge, counter or histogram (anything else: gauge).
  void Family(const std::string& name, const std::string& type, const std::string& help);
  // A sample of the family started last: its value (a counter's total). For a histogram,
  // `name` is the family's name with _bucket, _sum or _count. A sample of no family started
  // is a bug (SLUICE_CHECK).
  void Sample(const std::string& name, const Labels& labels, double value);
  // The exposition text of everything written so far.
  std::string text() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sluice::server
