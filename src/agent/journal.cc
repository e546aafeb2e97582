#include "agent/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

namespace sluice::agent {
namespace {

using nlohmann::json;

constexpr char kJournal[] = "journal";
constexpr int64_t kCompactSlack = 256;  // lines beyond twice the live set before a rewrite

Status IoError(const std::string& what, const std::string& path) {
  return Status(StatusCode::kInternal, what + " " + path + ": " + std::strerror(errno));
}

// The directory or file at `path` must be ours and writable by us alone.
Status CheckPrivate(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return IoError("cannot stat", path);
  if (info.st_uid != geteuid()) {
    return Status(StatusCode::kFailedPrecondition,
                  path + " is owned by uid " + std::to_string(info.st_uid) +
                      ", not by the agent's uid " + std::to_string(geteuid()));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Status(StatusCode::kFailedPrecondition,
                  path +
                      " is writable by group or others (the agent kills the processes its "
                      "journal names: chmod go-w it)");
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& dir) {
  std::string prefix;
  std::stringstream parts(dir);
  std::string part;
  while (std::getline(parts, part, '/')) {
    prefix += part + "/";
    if (part.empty()) continue;
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return IoError("cannot create", prefix);
    }
  }
  return Status::Ok();
}

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("cannot write", path);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

json ReportJson(const wire::ExitReport& report) {
  return wire::EncodeHeartbeat(wire::HeartbeatRequest{.exited = {report}})["exited"][0];
}

std::optional<wire::ExitReport> ReportOf(const json& entry) {
  Result<wire::HeartbeatRequest> decoded =
      wire::DecodeHeartbeat(json{{"exited", json::array({entry})}});
  if (!decoded || decoded->exited.size() != 1) return std::nullopt;
  return decoded->exited[0];
}

json LaunchJson(const JournalLaunch& l) {
  json line{{"launch", l.job}, {"epoch", l.epoch}, {"pgid", l.pgid}, {"start", l.start}};
  if (l.run != 0) line["run"] = l.run;
  if (l.limit_at_ms != 0) line["limit_at"] = l.limit_at_ms;
  if (l.interactive) line["attach"] = true;
  return line;
}

}  // namespace

uint64_t ProcessStartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return 0;
  // The command may hold spaces and parentheses: fields count from the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return 0;
}

AgentJournal::AgentJournal(std::string dir, int fd, int lock_fd)
    : dir_(std::move(dir)), fd_(fd), lock_fd_(lock_fd) {}

AgentJournal::~AgentJournal() {
  if (fd_ >= 0) close(fd_);
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
}

Result<std::unique_ptr<AgentJournal>> AgentJournal::Open(const std::string& dir) {
  SLUICE_RETURN_IF_ERROR(MakeDirs(dir));
  SLUICE_RETURN_IF_ERROR(CheckPrivate(dir));
  const std::string lock_path = dir + "/lock";
  const int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return IoError("cannot open", lock_path);
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    close(lock_fd);
    return Status(StatusCode::kFailedPrecondition,
                  "another agent uses the state directory " + dir + " (" + lock_path +
                      " is locked): give each agent a --state-dir of its own");
  }
  const std::string path = dir + "/" + kJournal;
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    const Status error = IoError("cannot open", path);
    close(lock_fd);
    return error;
  }
  std::unique_ptr<AgentJournal> journal(new AgentJournal(dir, fd, lock_fd));
  SLUICE_RETURN_IF_ERROR(CheckPrivate(path));
  SLUICE_RETURN_IF_ERROR(journal->Replay());
  SLUICE_RETURN_IF_ERROR(journal->Compact());
  return journal;
}

Status AgentJournal::Replay() {
  const std::string path = dir_ + "/" + kJournal;
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read", path);
  std::string line;
  while (std::getline(in, line)) {
    ++lines_;
    ApplyLine(line);
  }
  return Status::Ok();
}

void AgentJournal::ApplyLine(const std::string& line) {
  const json entry = json::parse(line, nullptr, /*allow_exceptions=*/false);
  const auto job_of = [&](const char* key) -> int64_t {
    const json& v = entry[key];
    return v.is_number_integer() && v.get<int64_t>() > 0 ? v.get<int64_t>() : 0;
  };
  if (!entry.is_object()) {
    ++skipped_;
  } else if (entry.contains("instance") && entry["instance"].is_string()) {
    instance_ = entry["instance"].get<std::string>();
  } else if (const int64_t job = entry.contains("launch") ? job_of("launch") : 0; job > 0) {
    JournalLaunch launch{.job = job};
    launch.epoch = entry.value("epoch", uint64_t{0});
    launch.pgid = entry.value("pgid", pid_t{0});
    launch.start = entry.value("start", uint64_t{0});
    launch.run = entry.value("run", uint64_t{0});
    launch.limit_at_ms = entry.value("limit_at", int64_t{0});
    launch.interactive = entry.value("attach", false);
    launched_[job] = launch;
  } else if (const int64_t exited = entry.contains("exit") ? job_of("exit") : 0; exited > 0) {
    std::optional<wire::ExitReport> report =
        entry.contains("report") ? ReportOf(entry["report"]) : std::nullopt;
    if (!report || report->job != exited) {
      ++skipped_;
      return;
    }
    launched_.erase(exited);
    exits_[exited] = *report;
  } else if (const int64_t acked = entry.contains("ack") ? job_of("ack") : 0; acked > 0) {
    exits_.erase(acked);
  } else if (const int64_t gone = entry.contains("gone") ? job_of("gone") : 0; gone > 0) {
    launched_.erase(gone);
  } else {
    ++skipped_;
  }
}

Status AgentJournal::Append(const std::string& line) {
  const std::string path = dir_ + "/" + kJournal;
  Status written = WriteAll(fd_, line + "\n", path);
  if (deferred_) {
    if (!written.ok() && deferred_error_.ok()) deferred_error_ = written;
    unsynced_ = true;
    if (written.ok()) ++lines_;
    return Status::Ok();
  }
  SLUICE_RETURN_IF_ERROR(written);
  if (fdatasync(fd_) != 0) return IoError("cannot sync", path);
  ++lines_;
  const int64_t live = static_cast<int64_t>(launched_.size() + exits_.size()) + 1;
  if (lines_ > 2 * live + kCompactSlack) return Compact();
  return Status::Ok();
}

Status AgentJournal::Compact() {
  std::string text;
  if (!instance_.empty()) text += json{{"instance", instance_}}.dump() + "\n";
  for (const auto& [job, l] : launched_) {
    text += LaunchJson(l).dump() + "\n";
  }
  for (const auto& [job, report] : exits_) {
    text += json{{"exit", job}, {"report", ReportJson(report)}}.dump(
                -1, ' ', false, json::error_handler_t::replace) +
            "\n";
  }
  const std::string path = dir_ + "/" + kJournal;
  const std::string temp = path + ".tmp";
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return IoError("cannot create", temp);
  Status written = WriteAll(fd, text, temp);
  if (written.ok() && fsync(fd) != 0) written = IoError("cannot sync", temp);
  close(fd);
  if (written.ok() && rename(temp.c_str(), path.c_str()) != 0) {
    written = IoError("cannot rename over", path);
  }
  if (!written.ok()) {
    unlink(temp.c_str());
    return written;
  }
  if (const int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  const int fd_new = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_new < 0) return IoError("cannot reopen", path);
  close(fd_);
  fd_ = fd_new;
  lines_ = static_cast<int64_t>(!instance_.empty() + launched_.size() + exits_.size());
  return Status::Ok();
}

Status AgentJournal::Sync() {
  deferred_ = false;
  Status result = std::exchange(deferred_error_, Status::Ok());
  if (!std::exchange(unsynced_, false)) return result;
  if (fdatasync(fd_) != 0 && result.ok()) result = IoError("cannot sync", dir_ + "/" + kJournal);
  if (!result.ok()) return result;
  const int64_t live = static_cast<int64_t>(launched_.size() + exits_.size()) + 1;
  if (lines_ > 2 * live + kCompactSlack) return Compact();
  return Status::Ok();
}

Status AgentJournal::SetInstance(const std::string& id) {
  instance_ = id;
  return Append(json{{"instance", id}}.dump());
}

Status AgentJournal::RecordLaunch(const JournalLaunch& l) {
  launched_[l.job] = l;
  return Append(LaunchJson(l).dump());
}

Status AgentJournal::RecordExit(const wire::ExitReport& report) {
  launched_.erase(report.job);
  exits_[report.job] = report;
  return Append(json{{"exit", report.job}, {"report", ReportJson(report)}}.dump(
      -1, ' ', false, json::error_handler_t::replace));
}

Status AgentJournal::RecordAck(int64_t job) {
  if (exits_.erase(job) == 0) return Status::Ok();
  return Append(json{{"ack", job}}.dump());
}

Status AgentJournal::RecordGone(int64_t job) {
  if (launched_.erase(job) == 0) return Status::Ok();
  return Append(json{{"gone", job}}.dump());
}

}  // namespace sluice::agent
