#include "integration/munge_daemon.h"

#include <sys/stat.h>

#include <chrono>

#include "auth/munge.h"
#include "testing/subprocess.h"

namespace sluice::integration {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

MungeDaemon::MungeDaemon() : dir_(temp_.path()) {
  ::chmod(dir_.c_str(), 0755);  // mkdtemp made it 0700: other accounts must reach the socket
  testing::ProcessResult key =
      testing::RunProcess({"/usr/sbin/mungekey", "--create", "--bits", "1024", "--keyfile",
                           (dir_ / "munge.key").string()},
                          dir_, 20s);
  if (!key.error.empty() || key.exit_code != 0) {
    error_ = "mungekey: " + key.error + key.stderr_text;
    return;
  }
  ok_ = Start();
}

MungeDaemon::~MungeDaemon() { Stop(); }

bool MungeDaemon::Start() {
  const std::string log = (dir_ / ("munged." + std::to_string(++starts_) + ".out")).string();
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{"/usr/sbin/munged", "--foreground", "--force", "--socket", socket(),
                               "--key-file=" + (dir_ / "munge.key").string(),
                               "--log-file=" + (dir_ / "munged.log").string(),
                               "--pid-file=" + (dir_ / "munged.pid").string(),
                               "--seed-file=" + (dir_ / "munged.seed").string()},
      log, log);
  // Serving once a credential can be encoded (bounded).
  const bool serving = Eventually(
      [&] { return !process_->Running() || auth::MungeEncode(socket()).has_value(); }, 10s);
  if (!serving || !process_->Running()) {
    error_ = "munged did not start: " + testing::ReadFile(log).value_or("");
    return false;
  }
  return true;
}

bool MungeDaemon::Restart() {
  Stop();
  ok_ = Start();
  return ok_;
}

void MungeDaemon::Stop() {
  if (process_) process_->Stop(5s);
  process_.reset();
}

}  // namespace sluice::integration
