#include "agent/peek_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "agent/account.h"

namespace sluice::agent {
namespace {

// Reads up to `length` bytes at `offset`.
bool ReadAt(int fd, int64_t offset, int64_t length, std::string& out) {
  out.assign(static_cast<size_t>(length), '\0');
  int64_t done = 0;
  while (done < length) {
    const ssize_t n =
        pread(fd, out.data() + done, static_cast<size_t>(length - done), offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    done += n;
  }
  out.resize(static_cast<size_t>(done));
  return true;
}

// Where the last `lines` lines of `tail` (which ends at the file's end) start.
size_t StartOfLastLines(const std::string& tail, int64_t lines) {
  size_t end = tail.size();
  if (end > 0 && tail[end - 1] == '\n') --end;  // a final newline ends the last line
  int64_t seen = 0;
  for (size_t i = end; i > 0; --i) {
    if (tail[i - 1] == '\n' && ++seen == lines) return i;
  }
  return 0;
}

}  // namespace

PeekTarget PeekTargetOf(const wire::Launch& launch, const JobSpec& spec) {
  PeekTarget target;
  if (!spec.output.empty()) target.path = ExpandJobPattern(spec.output, spec.job);
  if (!launch.user.empty()) {
    const std::string& owner = launch.account.empty() ? launch.user : launch.account;
    if (Result<Account> account = LookupAccount(owner, ""); account.has_value()) {
      target.account = account->uid;
    }
  }
  return target;
}

wire::PeekResult ReadPeek(const wire::PeekOrder& order, const PeekTarget* target) {
  wire::PeekResult result{.id = order.id, .job = order.job};
  if (target == nullptr) {
    result.error = "job " + std::to_string(order.job) + " does not run on this host";
    return result;
  }
  if (target->path.empty()) {
    result.error = "job " + std::to_string(order.job) +
                   " keeps no output (it goes to /dev/null; submit with -o FILE)";
    return result;
  }
  const int fd = open(target->path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    result.error = target->path + ": " + std::strerror(errno);
    return result;
  }
  struct stat st {};
  const bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                  (st.st_uid == geteuid() || (target->account && st.st_uid == *target->account));
  if (!ok) {
    close(fd);
    result.error = target->path + ": not a regular file of the job's account";
    return result;
  }
  result.size = st.st_size;
  std::string bytes;
  bool read_ok = false;
  if (order.offset) {
    result.offset = std::min<int64_t>(*order.offset, st.st_size);
    // The newest kMaxPeekBytes when more was written since `offset`.
    result.offset = std::max<int64_t>(result.offset, st.st_size - wire::kMaxPeekBytes);
    read_ok = ReadAt(fd, result.offset, st.st_size - result.offset, bytes);
  } else {
    result.offset = std::max<int64_t>(0, st.st_size - wire::kMaxPeekBytes);
    read_ok = ReadAt(fd, result.offset, st.st_size - result.offset, bytes);
    if (read_ok) {
      const size_t start = StartOfLastLines(bytes, order.lines);
      result.offset += static_cast<int64_t>(start);
      bytes.erase(0, start);
    }
  }
  const int error = errno;
  close(fd);
  if (!read_ok) {
    result.error = target->path + ": " + std::strerror(error);
    return result;
  }
  result.text = wire::ValidUtf8(bytes);
  return result;
}

}  // namespace sluice::agent
