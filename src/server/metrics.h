// Prometheus text exposition format 0.0.4 (R-SRV-4), written by hand: prometheus-cpp is not
// packaged in Debian 12. A small writer that emits each family's HELP and TYPE once and
// escapes label values.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sluice::server {

class PromWriter {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  // Starts a family; `type` is gauge, counter or histogram.
  void Family(const std::string& name, const std::string& type, const std::string& help);
  void Sample(const std::string& name, const Labels& labels, double value);
  const std::string& text() const { return out_; }

  static std::string EscapeLabel(const std::string& value);

 private:
  std::string out_;
};

}  // namespace sluice::server
