#include "agent/lease_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace sluice::agent {

Status WriteLeaseDeadline(const std::string& path, LeaseClock::time_point deadline) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline.time_since_epoch()).count();
  const std::string text = std::to_string(std::max<int64_t>(ms, 0)) + "\n";
  const std::string temp = path + ".tmp";
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot create " + temp + ": " + std::strerror(errno));
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int error = errno;
  close(fd);
  if (!written || rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(written ? errno : error);
    unlink(temp.c_str());
    return Internal("cannot write " + path + ": " + why);
  }
  return Status::Ok();
}

std::optional<LeaseClock::time_point> ReadLeaseDeadline(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line) || line.empty() || line.size() > 18 ||
      line.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return LeaseClock::time_point(std::chrono::milliseconds(std::stoll(line)));
}

std::optional<LeaseClock::time_point> LeaseFile::Inherit() {
  if (!path_.empty()) written_ = ReadLeaseDeadline(path_);
  return written_;
}

Status LeaseFile::Renew(LeaseClock::time_point deadline, std::chrono::milliseconds step) {
  if (path_.empty()) return Status::Ok();
  if (written_ && deadline >= *written_ && deadline - *written_ < step) return Status::Ok();
  SLUICE_RETURN_IF_ERROR(WriteLeaseDeadline(path_, deadline));
  written_ = deadline;
  return Status::Ok();
}

}  // namespace sluice::agent
