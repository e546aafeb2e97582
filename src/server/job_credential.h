// JobCredentials: the credential a running job holds to start its own steps (R-LAUNCH-1):
// `sluice launch` inside a job authenticates with it, so a job needs neither its user's token
// (the `jobs:` policy keeps SLUICE_TOKEN out of jobs) nor MUNGE.
//
// The credential is "<job>.<start time>.<HMAC-SHA-256 hex>" under the controller's key, sent
// as `Authorization: Job <credential>` and given to the job as SLUICE_JOB_CREDENTIAL. It
// names one run of one job (its start time), so it is worth nothing once that run ended, and
// it authorises only the step routes of that job, as its owner. The key is random, kept in
// the store's settings, so a restarted or failed-over controller accepts the credentials of
// jobs that kept running.
// Thread-safety: SetKey before use; then const methods only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::server {

struct JobCredentialClaim {
  int64_t job = 0;
  int64_t start_time = 0;
};

class JobCredentials {
 public:
  // The settings keys of the key (four 64-bit words) in the store.
  static constexpr int kKeyWords = 4;
  static std::string SettingKey(int word) { return "job_credential_key/" + std::to_string(word); }

  void SetKey(std::string key) { key_ = std::move(key); }
  bool has_key() const { return !key_.empty(); }

  std::string Issue(int64_t job, int64_t start_time) const;
  // The job and run a credential names when its MAC is right. kUnauthenticated otherwise.
  Result<JobCredentialClaim> Verify(std::string_view credential) const;

 private:
  std::string key_;
};

}  // namespace sluice::server
